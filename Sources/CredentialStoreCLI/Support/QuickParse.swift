import ArgumentParser

extension Lookup {
    /// What ArgumentParser reads from `arguments` when they are a `get` (nil for any other
    /// command): what the quick parser must agree with wherever it answers.
    package static func parsedByArgumentParser(_ arguments: [String]) throws -> Lookup? {
        (try CredstoreCommand.parseAsRoot(arguments) as? GetCommand)?.lookup
    }

    /// Reads the common forms of `get` (`get URL [--user U] [--realm R] [--store P] [--key-file P]
    /// [--json]`, each option also as `--name=value`) without ArgumentParser; nil for anything else,
    /// which the full parser then handles, errors and help included.
    ///
    /// ArgumentParser reflects over every command's properties and makes many dynamic casts on its
    /// first parse, about a millisecond and a half of a `get` process that should take a few. A
    /// test checks that wherever this parser answers, it agrees with ArgumentParser.
    package init?(quickParsing arguments: [String]) {
        guard arguments.first == "get" else { return nil }
        var url: String?
        var values: [String: String] = [:]
        var json = false
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                // A second URL, or a short option: the full parser explains.
                guard url == nil, !argument.hasPrefix("-") else { return nil }
                url = argument
                continue
            }
            let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            if name == "json", parts.count == 1, !json {
                json = true
                continue
            }
            guard Self.quickOptions.contains(name), values[name] == nil else { return nil }
            if parts.count == 2 {
                // ArgumentParser reads `--name=` as a missing value.
                guard !parts[1].isEmpty else { return nil }
                values[name] = String(parts[1])
            } else {
                // A value that looks like an option is left to the full parser's rules.
                guard index < arguments.count, !arguments[index].hasPrefix("-") else { return nil }
                values[name] = arguments[index]
                index += 1
            }
        }
        guard let url else { return nil }
        self.init(space: SpaceRequest(url: url, realm: values["realm"]), user: values["user"],
                  store: values["store"], keyFile: values["key-file"], json: json)
    }

    private static let quickOptions: Set<String> = ["user", "realm", "store", "key-file"]
}
