/// The consent a write needs to take a credential out of the fleet: for
/// ``CredentialStorage/remove(user:for:options:)``, and for a ``CredentialStorage/set(_:for:options:)``
/// or ``CredentialStorage/update(user:for:options:_:)`` that moves a synchronizable credential to
/// another tier.
public struct RemovalOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int

    /// Creates options from their bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Allows removing a synchronizable credential, or moving it to another tier, which removes it
    /// on every synced machine too.
    public static let removeSynchronizable = RemovalOptions(rawValue: 1 << 0)
}
