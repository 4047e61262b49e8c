import CredentialStoreCLI
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

// Before anything can hold a secret: no core dump, no ptrace attach.
ProcessHardening.apply()
let arguments = Array(CommandLine.arguments.dropFirst())
// Every command but `watch` runs right here, without starting the concurrency runtime.
if let status = CredstoreCommand.executeSynchronously(arguments) { exit(status) }
Task { exit(await CredstoreCommand.execute(arguments)) }
dispatchMain()
