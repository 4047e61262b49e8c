extension CredentialStorage {
    /// Client identities and server trust, kept in this store (``TLSKeychain``).
    public var tls: TLSKeychain {
        TLSKeychain(storage: self)
    }
}
