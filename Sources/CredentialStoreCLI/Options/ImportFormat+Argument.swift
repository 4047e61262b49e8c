import ArgumentParser
import CredentialStoreFormats

/// `--from git-credentials|keepassxc|bitwarden|chrome`: the format's raw value is its name on the command line.
extension ImportFormat: ExpressibleByArgument {}
