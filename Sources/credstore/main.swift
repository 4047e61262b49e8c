import CredentialStoreCLI
// Unused here, but a release build compiles this file with -static-executable (Package.swift), and
// only a file that imports Foundation from the static SDK names the libraries static Foundation
// needs (ICU, its C++ runtime, collections) for the linker.
import Foundation

CredstoreCommand.runAsProcess()
