import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

@Suite struct CredentialTests {
    static let password = "s3cr3t-Pa55phrase"
    static let credential = Credential(user: "alice@example.com", password: password, persistence: .synchronizable)

    /// Every way a credential commonly ends up in a log line.
    enum Rendering: String, CaseIterable, Sendable {
        case description, debugDescription, reflecting, interpolation, optional, array, dump, dumpInArray, mirror

        func render(_ credential: Credential) -> String {
            switch self {
            case .description: return credential.description
            case .debugDescription: return credential.debugDescription
            case .reflecting: return String(reflecting: credential)
            case .interpolation: return "\(credential)"
            case .optional: return String(describing: Optional(credential))
            case .array: return "\([credential])"
            case .dump:
                var out = ""
                Swift.dump(credential, to: &out)
                return out
            case .dumpInArray:
                var out = ""
                Swift.dump(["key": credential], to: &out)
                return out
            case .mirror:
                return Mirror(reflecting: credential).children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: ", ")
            }
        }
    }

    @Test("A credential's text forms never contain the password but do name the user", arguments: Rendering.allCases)
    func renderingHidesPassword(rendering: Rendering) {
        let text = rendering.render(Self.credential)
        #expect(!text.contains(Self.password))
        #expect(!text.contains("s3cr3t"))
        #expect(text.contains("alice@example.com"))
    }

    @Test("Credentials with the same user, password and persistence are equal and hash alike")
    func identicalCredentialsAreEqual() {
        let copy = Credential(user: "alice@example.com", password: Self.password, persistence: .synchronizable)
        #expect(copy == Self.credential)
        #expect(copy.hashValue == Self.credential.hashValue)
        #expect(Set([copy, Self.credential]).count == 1)
    }

    @Test("Credentials that differ in user, password or persistence are not equal", arguments: [
        Credential(user: "bob@example.com", password: password, persistence: .synchronizable),
        Credential(user: "Alice@example.com", password: password, persistence: .synchronizable),
        Credential(user: "alice@example.com", password: password + " ", persistence: .synchronizable),
        Credential(user: "alice@example.com", password: "", persistence: .synchronizable),
        Credential(user: "alice@example.com", password: password, persistence: .permanent),
        Credential(user: "alice@example.com", password: password, persistence: .forSession),
        Credential(user: "alice@example.com", password: password, persistence: .none),
    ])
    func differingCredentialsAreNotEqual(other: Credential) {
        #expect(other != Self.credential)
        #expect(Set([other, Self.credential]).count == 2)
    }

    @Test("Only permanent and synchronizable credentials are stored on disk", arguments: [
        (Persistence.none, false), (.forSession, false), (.permanent, true), (.synchronizable, true),
    ])
    func onlyDurableTiersAreStoredOnDisk(persistence: Persistence, onDisk: Bool) {
        #expect(persistence.isStoredOnDisk == onDisk)
    }
}
