import ArgumentParser
import CredentialStoreFormats

/// `--method basic|digest|ntlm|negotiate|form|any`; `default` is read too, and not offered.
extension MethodName: ExpressibleByArgument {}
