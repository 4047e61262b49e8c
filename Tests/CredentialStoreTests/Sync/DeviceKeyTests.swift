import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// A device key: read from the text people copy, refused when mistyped, written back unchanged.
@Suite struct DeviceKeyTests {
    @Test func theTextAStoreShowsReadsBackAsTheSameKey() throws {
        let key = try TemporaryStore().open().sync.deviceKey
        let text = key.description
        #expect(text.hasPrefix("csdev1:"))
        #expect(try DeviceKey(text) == key)
        #expect(try DeviceKey("  \(text)\n") == key, "a copied line break or indent is not part of the key")
    }

    @Test(arguments: [
        "", "csdev1:", "csdev2:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5",
        "csdev1:AAAA", "csdev1:!!!!AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func textThatIsNotADeviceKeyIsRefused(text: String) {
        expectError(.invalidInput) { try DeviceKey(text) }
    }

    /// Keys of the right length that no store can have: all zeros, the identity point, a point of
    /// order 8 and an encoding off the curve. Sealing a bundle to one fails, so each would make
    /// every later `sync` fail.
    @Test(arguments: [
        [UInt8](repeating: 0, count: 32),
        [1] + [UInt8](repeating: 0, count: 31),
        [0xC7, 0x17, 0x6A, 0x70, 0x3D, 0x4D, 0xD8, 0x4F, 0xBA, 0x3C, 0x0B, 0x76, 0x0D, 0x10, 0x67, 0x0F,
         0x2A, 0x20, 0x53, 0xFA, 0x2C, 0x39, 0xCC, 0xC6, 0x4E, 0xC7, 0xFD, 0x77, 0x92, 0xAC, 0x03, 0x7A],
        [UInt8](repeating: 0xFF, count: 32),
    ])
    func aKeyNoStoreCanHaveIsRefused(bytes: [UInt8]) {
        let text = "csdev1:" + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        expectError(.invalidInput) { try DeviceKey(text) }
    }

    @Test func aTruncatedOrLengthenedKeyIsRefused() throws {
        let text = try TemporaryStore().open().sync.deviceKey.description
        expectError(.invalidInput) { try DeviceKey(String(text.dropLast(2))) }
        expectError(.invalidInput) { try DeviceKey(text + "AAAA") }
    }

    @Test func itEncodesAsItsTextAndRefusesToDecodeAnythingElse() throws {
        let key = try TemporaryStore().open().sync.deviceKey
        let json = try JSONEncoder().encode([key])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(key.description)\"]")
        #expect(try JSONDecoder().decode([DeviceKey].self, from: json) == [key])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DeviceKey].self, from: Data("[\"csdev1:nonsense\"]".utf8)) }
    }

    @Test func trustingByKeyIsWhatTheTextFormsDid() throws {
        let storage = try TemporaryStore().open()
        let other = try TemporaryStore().open().sync.deviceKey
        try storage.sync.trust(other)
        try storage.sync.trust(other)
        #expect(try storage.sync.trustedDevices().map(\.key) == [other], "trusting twice changes nothing")
        try storage.sync.untrust(other)
        #expect(try storage.sync.trustedDevices().map(\.key).isEmpty)
        expectError(.notFound) { try storage.sync.untrust(other) }
    }
}
