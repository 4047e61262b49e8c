import CredentialStore

// TEMPORARY: stands in for the library's `defaultCredential(answering:)` until it lands on main;
// delete this file when merging it (the two would be ambiguous, so the build says so).
extension CredentialStorage {
    func defaultCredential(answering space: ProtectionSpace) throws -> Credential? {
        if let credential = try defaultCredential(for: space) { return credential }
        guard let realm = space.realm, !realm.isEmpty else { return nil }
        func variant(realm: String?) -> ProtectionSpace {
            if let type = space.proxyType {
                return ProtectionSpace(proxyHost: space.host, port: space.port, type: type, realm: realm)
            }
            return ProtectionSpace(host: space.host, port: space.port, protocol: space.protocol, realm: realm)
        }
        if let credential = try defaultCredential(for: variant(realm: realm)) { return credential }
        return try defaultCredential(for: variant(realm: nil))
    }
}
