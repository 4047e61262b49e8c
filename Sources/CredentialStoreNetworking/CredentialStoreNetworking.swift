// The FoundationNetworking bridge (URLCredential, URLProtectionSpace, challenge answering) lands
// here; the core module stays free of FoundationNetworking.
@_exported public import CredentialStore
