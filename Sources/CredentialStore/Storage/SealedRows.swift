/// Turns credentials into sealed rows and back.
///
/// Each sealed field is bound, as associated data, to a label naming the field and to every clear
/// column of its row. Moving a ciphertext to another row or field, or editing a clear column,
/// makes it fail authentication, which surfaces as ``CredentialStorageError/Code/tamperDetected``.
extension StoreKeys {
    private enum Field: UInt8 {
        case space = 1, credential = 2, defaultUser = 4, changeSubject = 5
    }

    private func rowAD(_ field: Field, _ row: SealedCredential) -> [UInt8] {
        var writer = ByteWriter(capacity: 80)
        writer.append(field.rawValue)
        writer.append(raw: row.spaceIndex)
        writer.append(raw: row.userIndex)
        writer.append(raw: row.originIndex)
        writer.append(UInt8(SQLiteAccess.code(row.persistence)))
        writer.append(row.created)
        writer.append(row.modified)
        return writer.bytes
    }

    /// Seals `credential` as the row of (`space`, its user); pass the user index when known.
    func seal(
        _ credential: Credential, in space: ProtectionSpace, spaceIndex: [UInt8], userIndex knownUserIndex: [UInt8]? = nil,
        created: Int64, modified: Int64
    ) -> SealedCredential {
        var row = SealedCredential(
            spaceIndex: spaceIndex,
            userIndex: knownUserIndex ?? userIndex(spaceIndex: spaceIndex, user: credential.user),
            originIndex: originIndex(space),
            persistence: credential.persistence,
            created: created, modified: modified,
            sealedSpace: [], sealedCredential: [])
        row.sealedSpace = seal(space.canonicalEncoding, ad: rowAD(.space, row))
        var plain = ByteWriter(capacity: 64)
        plain.append(credential.user)
        plain.append(credential.password)
        defer { plain.wipe() }
        row.sealedCredential = seal(plain.bytes, ad: rowAD(.credential, row))
        return row
    }

    /// The user and password of a row; `tamperDetected` if it fails authentication.
    func openCredential(_ row: SealedCredential) throws -> Credential {
        let opened = open(row.sealedCredential, ad: rowAD(.credential, row)) { plain -> (String, String)? in
            var reader = ByteReader(plain)
            defer { reader.wipe() }
            guard let user = try? reader.readString(), let password = try? reader.readString(), reader.isAtEnd else { return nil }
            return (user, password)
        } ?? nil
        guard let (user, password) = opened else { throw Self.tampered }
        return Credential(user: user, password: password, persistence: row.persistence)
    }

    /// The user of a row (the password is opened with it, and dropped).
    func openUser(_ row: SealedCredential) throws -> String {
        try openCredential(row).user
    }

    /// The protection space of a row, checked against the row's blind indexes.
    func openSpace(_ row: SealedCredential) throws -> ProtectionSpace {
        let space = open(row.sealedSpace, ad: rowAD(.space, row)) { try? ProtectionSpace(canonicalEncoding: $0) } ?? nil
        guard let space, spaceIndex(space) == row.spaceIndex, originIndex(space) == row.originIndex else {
            throw Self.tampered
        }
        return space
    }

    /// Opens space, user and secret, and checks the user index too: what `verify` and listing use.
    func openAll(_ row: SealedCredential) throws -> (ProtectionSpace, Credential) {
        let space = try openSpace(row)
        let credential = try openCredential(row)
        guard userIndex(spaceIndex: row.spaceIndex, user: credential.user) == row.userIndex else { throw Self.tampered }
        return (space, credential)
    }

    // MARK: Default choices

    private func defaultAD(spaceIndex: [UInt8], userIndex: [UInt8]) -> [UInt8] {
        [Field.defaultUser.rawValue] + spaceIndex + userIndex
    }

    func sealDefault(user: String, spaceIndex: [UInt8], userIndex knownUserIndex: [UInt8]? = nil) -> SealedDefault {
        let userIndex = knownUserIndex ?? userIndex(spaceIndex: spaceIndex, user: user)
        return SealedDefault(
            spaceIndex: spaceIndex, userIndex: userIndex,
            sealedUser: seal(user, ad: defaultAD(spaceIndex: spaceIndex, userIndex: userIndex)))
    }

    func openDefault(_ choice: SealedDefault) throws -> String {
        guard let user = openString(choice.sealedUser, ad: defaultAD(spaceIndex: choice.spaceIndex, userIndex: choice.userIndex)),
              userIndex(spaceIndex: choice.spaceIndex, user: user) == choice.userIndex
        else { throw Self.tampered }
        return user
    }

    // MARK: Change log

    private func changeAD(sequence: Int64, writer: [UInt8], processID: Int32, kind: CredentialChange.Kind, persistence: Persistence) -> [UInt8] {
        var bytes = ByteWriter(capacity: 48)
        bytes.append(Field.changeSubject.rawValue)
        bytes.append(sequence)
        bytes.append(raw: writer)
        bytes.append(Int64(processID))
        bytes.append(UInt8(kind.code))
        bytes.append(UInt8(SQLiteAccess.code(persistence)))
        return bytes.bytes
    }

    func sealChangeSubject(
        space: ProtectionSpace, user: String, sequence: Int64, writer: [UInt8], processID: Int32,
        kind: CredentialChange.Kind, persistence: Persistence
    ) -> [UInt8] {
        var subject = ByteWriter(capacity: 96)
        subject.append(raw: space.canonicalEncoding)
        subject.append(user)
        var encodedSpaceLength = ByteWriter()
        encodedSpaceLength.append(Int64(space.canonicalEncoding.count))
        return seal(encodedSpaceLength.bytes + subject.bytes, ad: changeAD(
            sequence: sequence, writer: writer, processID: processID, kind: kind, persistence: persistence))
    }

    func openChange(_ entry: SealedChange, origin: CredentialChange.Origin) -> CredentialChange? {
        let ad = changeAD(sequence: entry.sequence, writer: entry.writer, processID: entry.processID, kind: entry.kind, persistence: entry.persistence)
        return open(entry.sealedSubject, ad: ad) { plain -> CredentialChange? in
            var reader = ByteReader(UnsafeRawBufferPointer(plain))
            guard let spaceLength = try? reader.readInt64(),
                  let spaceBytes = try? reader.readRaw(count: Int(spaceLength)),
                  let space = try? ProtectionSpace(canonicalEncoding: spaceBytes),
                  let user = try? reader.readString(), reader.isAtEnd
            else { return nil }
            return CredentialChange(kind: entry.kind, space: space, user: user, persistence: entry.persistence, origin: origin)
        } ?? nil
    }

    static let tampered = CredentialStorageError(.tamperDetected,
        "a stored credential was altered outside credstore; run `credstore verify` and restore the store from a backup")
}
