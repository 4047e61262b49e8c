extension ProtectionSpace {
    /// Encoding version, so a future change of the canonical form cannot collide with this one.
    private static let encodingVersion: UInt8 = 1

    /// The canonical identity as bytes: the input of the blind indexes and the sealed plaintext of
    /// the space column. Equal spaces, and only equal spaces, encode to equal bytes. Made once, in
    /// the initializers, from the canonical fields.
    package static func encode(
        proxyType: ProxyType?, protocol: String?, host: String, port: Int, realm: String?, method: AuthenticationMethod
    ) -> [UInt8] {
        var writer = originWriter(proxyType: proxyType, protocol: `protocol`, host: host, port: port)
        writer.append(optional: realm)
        writer.append(method.rawValue)
        return writer.bytes
    }

    /// Host, port, protocol and proxy kind without realm and method: what a request URL knows
    /// before the server names a realm, and so the key of best-match lookups.
    package var originEncoding: [UInt8] {
        Self.originWriter(proxyType: proxyType, protocol: `protocol`, host: host, port: port).bytes
    }

    private static func originWriter(proxyType: ProxyType?, protocol: String?, host: String, port: Int) -> ByteWriter {
        var writer = ByteWriter(capacity: 96)
        writer.append(encodingVersion)
        if let proxyType {
            writer.append(UInt8(1))
            writer.append(proxyType.rawValue)
        } else {
            writer.append(UInt8(0))
            writer.append(optional: `protocol`)
        }
        writer.append(host)
        writer.append(Int64(port))
        return writer
    }

    /// Rebuilds a space from ``canonicalEncoding``.
    ///
    /// - Throws: `ByteReader.Malformed` for bytes that are not a canonical encoding, and the
    ///   errors of ``validate()`` for a space no store may hold.
    package init(canonicalEncoding bytes: [UInt8]) throws {
        try self.init(canonicalEncoding: bytes[...])
    }

    /// Rebuilds a space from ``canonicalEncoding`` read in place (a decrypted field).
    package init(canonicalEncoding bytes: UnsafeRawBufferPointer) throws {
        try self.init(canonicalEncoding: ArraySlice(bytes))
    }

    /// Rebuilds a space from ``canonicalEncoding`` read from a longer record. Concrete, not
    /// generic: called from the layers above, a generic would run unspecialized.
    package init(canonicalEncoding bytes: ArraySlice<UInt8>) throws {
        let fields = try Self.fields(of: bytes)
        if let proxyType = fields.proxyType {
            self.init(proxy: ProxyEndpoint(host: fields.host, port: fields.port, type: proxyType), realm: fields.realm, authenticationMethod: fields.method)
        } else {
            self.init(host: fields.host, port: fields.port, protocol: fields.protocol, realm: fields.realm, authenticationMethod: fields.method)
        }
        // Bytes from a bundle or a row enter the store as a space: they pass the rules `set`
        // applies, and must already be canonical (a non-canonical spelling would be a second
        // encoding of one space, with its own blind index).
        try validate()
        guard canonicalEncoding.elementsEqual(bytes) else { throw ByteReader.Malformed() }
    }

    /// Rebuilds a space from a canonical encoding the store wrote and authenticated itself: its
    /// change log. The fields are taken as they are, not canonicalized again (they were when the
    /// space entered the store, and the entry's encryption vouches that they are what was
    /// written), which makes announcing a large import's changes from the log cheap. They still
    /// pass `validate()`: a watcher prints what it reads, and no line break or control byte may
    /// reach a terminal or a line protocol from any source. For announcements only: an answer is
    /// built from a row, through `init(canonicalEncoding:)`, which also checks the spelling.
    package init(loggedCanonicalEncoding bytes: ArraySlice<UInt8>) throws {
        let fields = try Self.fields(of: bytes)
        host = fields.host
        port = fields.port
        self.protocol = fields.protocol
        realm = fields.realm
        authenticationMethod = fields.method
        proxyType = fields.proxyType
        canonicalEncoding = Array(bytes)
        try validate()
    }

    private static func fields(of bytes: ArraySlice<UInt8>) throws -> (
        proxyType: ProxyType?, protocol: String?, host: String, port: Int, realm: String?, method: AuthenticationMethod
    ) {
        var reader = ByteReader(bytes)
        guard try reader.readByte() == Self.encodingVersion else { throw ByteReader.Malformed() }
        let kind = try reader.readByte()
        let proxyType: ProxyType?
        let proto: String?
        switch kind {
        case 0:
            proxyType = nil
            proto = try reader.readOptionalString()
        case 1:
            guard let type = ProxyType(rawValue: try reader.readString()) else { throw ByteReader.Malformed() }
            proxyType = type
            proto = nil
        default:
            throw ByteReader.Malformed()
        }
        let host = try reader.readString()
        guard let port = Int(exactly: try reader.readInt64()) else { throw ByteReader.Malformed() }
        let realm = try reader.readOptionalString()
        let method = AuthenticationMethod(rawValue: try reader.readString())
        try reader.expectEnd()
        return (proxyType, proto, host, port, realm, method)
    }
}
