import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// Turns credentials into sealed rows and back.
///
/// Each sealed field is bound, as associated data, to a label naming the field and to every clear
/// column of its row. Moving a ciphertext to another row or field, or editing a clear column,
/// makes it fail authentication, which surfaces as ``CredentialStorageError/Code/tamperDetected``.
extension StoreKeyring {
    private enum Field: UInt8 {
        // 5 sealed one change's subject, before the change log kept an entry per transaction.
        case space = 1, credential = 2, defaultUser = 4, changes = 10
    }

    private func rowAD(_ field: Field, _ row: SealedCredential) -> [UInt8] {
        var writer = ByteWriter(capacity: 80)
        writer.append(field.rawValue)
        writer.append(raw: row.spaceIndex.bytes)
        writer.append(raw: row.userIndex.bytes)
        writer.append(raw: row.originIndex.bytes)
        writer.append(UInt8(row.persistence.storedCode))
        writer.append(row.created)
        writer.append(row.modified)
        return writer.bytes
    }

    /// Encrypts `credential` as the row of (`space`, its user); pass the user index when known.
    func encrypt(
        _ credential: Credential, in space: ProtectionSpace, spaceIndex: BlindIndex, userIndex knownUserIndex: BlindIndex? = nil,
        created: Int64, modified: Int64
    ) -> SealedCredential {
        var row = SealedCredential(
            spaceIndex: spaceIndex,
            userIndex: knownUserIndex ?? userIndex(spaceIndex: spaceIndex, user: credential.user),
            originIndex: originIndex(space),
            persistence: credential.persistence,
            created: created, modified: modified,
            sealedSpace: [], sealedCredential: [])
        row.sealedSpace = encrypt(space.canonicalEncoding, ad: rowAD(.space, row))
        var plain = ByteWriter(capacity: 64)
        plain.append(credential.user)
        plain.append(credential.password)
        if credential.hasDetails { Self.appendDetails(of: credential, to: &plain) }
        defer { plain.wipe() }
        row.sealedCredential = encrypt(plain.bytes, ad: rowAD(.credential, row))
        row.tagIndexes = tagIndexes(of: credential)
        return row
    }

    /// The user and password of a row; `tamperDetected` if it fails authentication.
    func decryptCredential(_ row: SealedCredential) throws -> Credential {
        // The non-generic `decrypt(_:ad:visiting:)`: the generic one, called from this module,
        // instantiated the metadata of its `(String, String)?` result on every lookup.
        var opened: Credential?
        decrypt(row.sealedCredential, ad: rowAD(.credential, row), visiting: { plain in
            var reader = ByteReader(plain)
            defer { reader.wipe() }
            guard let user = try? reader.readString(), let password = try? reader.readString() else { return }
            var credential = Credential(user: user, password: password, persistence: row.persistence)
            // A row written before credentials had details ends here.
            guard reader.isAtEnd || (try? Self.readDetails(into: &credential, from: &reader)) != nil else { return }
            // An expiry outside the range every write checks is not one credstore wrote.
            guard credential.hasExpiryInRange else { return }
            opened = credential
        })
        guard let opened else { throw Self.tampered }
        return opened
    }

    /// The version byte that starts a credential's details in its sealed plaintext, after the
    /// user and password; a row without details ends after the password (as every row written
    /// before details existed does), so no row needs rewriting.
    private static let detailsVersion: UInt8 = 1

    private enum DetailField: UInt8 {
        case expires = 1, refreshToken = 2, label = 3, comment = 4, attribute = 5
    }

    /// Appends the details as tagged fields, attributes sorted by name (one credential, one encoding).
    static func appendDetails(of credential: Credential, to plain: inout ByteWriter) {
        plain.append(detailsVersion)
        if let seconds = credential.expiresEpochSeconds {
            plain.append(DetailField.expires.rawValue)
            plain.append(seconds)
        }
        for (field, text) in [(DetailField.refreshToken, credential.refreshToken), (.label, credential.label), (.comment, credential.comment)] {
            guard let text else { continue }
            plain.append(field.rawValue)
            plain.append(text)
        }
        for (name, value) in credential.attributes.sorted(by: { $0.key < $1.key }) {
            plain.append(DetailField.attribute.rawValue)
            plain.append(name)
            plain.append(value)
        }
    }

    /// Reads what ``appendDetails(of:to:)`` wrote, to the end; throws on anything else (an
    /// unknown version or field, a repeated one, trailing bytes).
    static func readDetails(into credential: inout Credential, from reader: inout ByteReader) throws {
        guard try reader.readByte() == detailsVersion else { throw StoreKeyring.tampered }
        var seen: Set<UInt8> = []
        while !reader.isAtEnd {
            let tag = try reader.readByte()
            guard let field = DetailField(rawValue: tag), field == .attribute || seen.insert(tag).inserted else { throw StoreKeyring.tampered }
            switch field {
            case .expires: credential.expiresEpochSeconds = try reader.readInt64()
            case .refreshToken: credential.refreshToken = try reader.readString()
            case .label: credential.label = try reader.readString()
            case .comment: credential.comment = try reader.readString()
            case .attribute:
                let name = try reader.readString()
                guard credential.attributes.updateValue(try reader.readString(), forKey: name) == nil else { throw StoreKeyring.tampered }
            }
        }
    }

    /// The user of a row (the password is opened with it, and dropped).
    func decryptUser(_ row: SealedCredential) throws -> String {
        try decryptCredential(row).user
    }

    /// The protection space of a row, checked against the row's blind indexes.
    func decryptSpace(_ row: SealedCredential) throws -> ProtectionSpace {
        let space = decrypt(row.sealedSpace, ad: rowAD(.space, row)) { try? ProtectionSpace(canonicalEncoding: $0) } ?? nil
        guard let space, spaceIndex(space) == row.spaceIndex, originIndex(space) == row.originIndex else {
            throw Self.tampered
        }
        return space
    }

    /// Opens space, user and secret, and checks the user index too: what `verify` and listing use.
    func decryptAll(_ row: SealedCredential) throws -> (ProtectionSpace, Credential) {
        let space = try decryptSpace(row)
        let credential = try decryptCredential(row)
        guard userIndex(spaceIndex: row.spaceIndex, user: credential.user) == row.userIndex else { throw Self.tampered }
        return (space, credential)
    }

    // MARK: Default choices

    private func defaultAD(spaceIndex: BlindIndex, userIndex: BlindIndex) -> [UInt8] {
        [Field.defaultUser.rawValue] + spaceIndex.bytes + userIndex.bytes
    }

    func encryptDefault(user: String, spaceIndex: BlindIndex, userIndex knownUserIndex: BlindIndex? = nil) -> SealedDefault {
        let userIndex = knownUserIndex ?? userIndex(spaceIndex: spaceIndex, user: user)
        return SealedDefault(
            spaceIndex: spaceIndex, userIndex: userIndex,
            sealedUser: encrypt(user, ad: defaultAD(spaceIndex: spaceIndex, userIndex: userIndex)))
    }

    func decryptDefault(_ choice: SealedDefault) throws -> String {
        guard let user = decryptString(choice.sealedUser, ad: defaultAD(spaceIndex: choice.spaceIndex, userIndex: choice.userIndex)),
              userIndex(spaceIndex: choice.spaceIndex, user: user) == choice.userIndex
        else { throw Self.tampered }
        return user
    }

    // MARK: Change log

    private func changesAD(sequence: Int64, writer: [UInt8], processID: Int32) -> [UInt8] {
        var bytes = ByteWriter(capacity: 40)
        bytes.append(Field.changes.rawValue)
        bytes.append(sequence)
        bytes.append(raw: writer)
        bytes.append(Int64(processID))
        return bytes.bytes
    }

    /// Encrypts a change-log entry: the kind, tier, space and user of each change, in order, bound
    /// to the entry's sequence number and writer.
    func encryptChanges(_ changes: ArraySlice<CredentialChange>, sequence: Int64, writer: [UInt8], processID: Int32) -> [UInt8] {
        var plain = ByteWriter(capacity: changes.count * 96)
        defer { plain.wipe() }
        for change in changes {
            let space = change.space.canonicalEncoding
            plain.append(UInt8(change.kind.code))
            plain.append(UInt8(change.persistence.storedCode))
            plain.append(Int64(space.count))
            plain.append(raw: space)
            plain.append(change.user)
        }
        return encrypt(plain.bytes, ad: changesAD(sequence: sequence, writer: writer, processID: processID))
    }

    /// The changes of a change-log entry; nil when it does not open (sealed under another root
    /// key, or altered) or does not decode.
    func decryptChanges(_ entry: SealedChangeEntry, origin: CredentialChange.Origin) -> [CredentialChange]? {
        let ad = changesAD(sequence: entry.sequence, writer: entry.writer, processID: entry.processID)
        return decrypt(entry.sealedChanges, ad: ad) { plain -> [CredentialChange]? in
            var reader = ByteReader(UnsafeRawBufferPointer(plain))
            defer { reader.wipe() }
            var changes: [CredentialChange] = []
            while !reader.isAtEnd {
                guard let kind = try? CredentialChange.Kind(code: Int(reader.readByte())),
                      let persistence = try? Persistence(storedCode: Int64(reader.readByte())),
                      let spaceLength = try? reader.readInt64(),
                      let spaceBytes = try? reader.readRaw(count: Int(spaceLength)),
                      let space = try? ProtectionSpace(loggedCanonicalEncoding: spaceBytes),
                      let user = try? reader.readString()
                else { return nil }
                changes.append(CredentialChange(kind: kind, space: space, user: user, persistence: persistence, origin: origin))
            }
            return changes
        } ?? nil
    }

    static let tampered = CredentialStorageError(.tamperDetected,
        "a stored credential was altered outside credstore; verify the store and restore it from a backup")
}
