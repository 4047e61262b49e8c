import CredentialStoreCLI
// Unused here, but a release build compiles this file with -static-executable (Package.swift), and
// only a file that imports Foundation from the static SDK names the libraries static Foundation
// needs (ICU, its C++ runtime, collections) for the linker.
import Foundation

// `credstore` with the TLS libraries linked: it runs every command, and `credstore` hands it the
// TLS ones (TLSCommands).
TLSCommands.install(LinkedTLSToolkit())
CredstoreCommand.runAsProcess()
