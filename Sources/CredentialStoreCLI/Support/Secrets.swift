extension Console {
    /// A new password for `add`: one line of standard input, or typed twice at a no-echo prompt.
    func readNewPassword(prompt: String, what: String = "password") throws -> String {
        guard secrets.isTerminal else {
            guard let line = try secrets.readLine() else {
                throw CommandFailure(.dataError, "no \(what) on standard input; pipe it in on one line, or run on a terminal to be asked")
            }
            guard !line.isEmpty else {
                throw CommandFailure(.dataError, "the \(what) on standard input is empty; nothing was stored")
            }
            return line
        }
        return try promptTwice(prompt, repeated: "Retype the \(what): ", what: what)
    }

    /// A secret that exists already (a PKCS #12 file's password): one line of standard input, or
    /// asked once at a no-echo prompt. Empty is allowed: `openssl pkcs12 -export` writes files
    /// with an empty password.
    func readExistingSecret(prompt: String, what: String) throws -> String {
        guard secrets.isTerminal else {
            guard let line = try secrets.readLine() else {
                throw CommandFailure(.dataError, "no \(what) on standard input; pipe it in on one line, or run on a terminal to be asked")
            }
            return line
        }
        guard let typed = try secrets.readSecret(prompt: prompt) else {
            throw CommandFailure(.dataError, "no \(what) was typed; nothing was changed")
        }
        return typed
    }

    /// A new passphrase: from environment variable `variable`, else typed twice at a prompt.
    func readNewPassphrase(from variable: String, prompt: String) throws -> String {
        if let passphrase = self.variable(variable) { return passphrase }
        guard secrets.isTerminal else {
            throw CommandFailure(.usage, "set \(variable) to the new passphrase, or run credstore on a terminal to be asked for it")
        }
        return try promptTwice(prompt, repeated: "Retype the new passphrase: ", what: "passphrase")
    }

    /// Asks twice, so that a typo made blind is not what gets stored.
    private func promptTwice(_ prompt: String, repeated: String, what: String) throws -> String {
        guard let first = try secrets.readSecret(prompt: prompt), !first.isEmpty else {
            throw CommandFailure(.dataError, "no \(what) was typed; nothing was changed")
        }
        guard let second = try secrets.readSecret(prompt: repeated), second == first else {
            throw CommandFailure(.dataError, "the two \(what)s do not match; nothing was changed")
        }
        return first
    }
}
