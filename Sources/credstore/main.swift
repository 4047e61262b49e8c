import CredentialStoreCLI
import Dispatch
// Unused here, but a release build compiles this file with -static-executable (Package.swift), and
// only a file that imports Foundation from the static SDK names the libraries static Foundation
// needs (ICU, its C++ runtime, collections) for the linker.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Before anything can hold a secret: no core dump, no ptrace attach.
ProcessHardening.apply()
let arguments = CredstoreCommand.arguments(of: CommandLine.arguments)
// Every command but `watch` runs right here, without starting the concurrency runtime.
if let status = CredstoreCommand.executeSynchronously(arguments) { exit(status) }
Task { exit(await CredstoreCommand.execute(arguments)) }
dispatchMain()
