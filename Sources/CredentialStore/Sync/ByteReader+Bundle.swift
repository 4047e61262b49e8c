import CredentialStoreCore

extension ByteReader {
    var remaining: Int { count - position }

    /// Runs a read, turning a shortfall into an `invalidBundle` error.
    mutating func orInvalid<T>(_ body: (inout ByteReader) throws -> T) throws -> T {
        do {
            return try body(&self)
        } catch {
            throw CredentialStorageError(.invalidBundle, "the bundle is not valid (malformed contents); it was damaged or altered: get a fresh copy")
        }
    }
}
