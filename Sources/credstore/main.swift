import ArgumentParser
import CredentialStoreCLI

CredstoreCommand.main()
