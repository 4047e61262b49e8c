/// A space's credentials, and its default choice when the default rule needs it.
///
/// The choice is always read: one that names no credential of the space is tampering (a row was
/// deleted outside credstore), whatever the number of credentials left.
package struct SealedSpace: Sendable {
    package var credentials: [SealedCredential]
    package var defaultChoice: SealedDefault?

    package init(credentials: [SealedCredential], defaultChoice: SealedDefault?) {
        self.credentials = credentials
        self.defaultChoice = defaultChoice
    }
}
