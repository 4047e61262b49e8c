import CredentialStoreCLI
#if canImport(Glibc)
import Glibc
#endif

// Before anything can hold a secret: no core dump, no ptrace attach.
ProcessHardening.apply()
exit(await CredstoreCommand.execute(Array(CommandLine.arguments.dropFirst())))
