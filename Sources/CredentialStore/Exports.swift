// The model, the errors and the challenge parser live in lower layers (docs/architecture.md,
// "Targets"); `import CredentialStore` keeps giving an app all of them, as before the split.
@_exported public import CredentialStoreCore
@_exported public import CredentialStoreChallenges
