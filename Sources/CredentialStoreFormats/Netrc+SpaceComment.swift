package import CredentialStore

/// The `# credstore:` comment line: the space of the entry below it, which netrc itself cannot say.
///
/// A netrc entry names a host, and curl matches it by host alone; the store files a credential
/// under a scheme, a port, maybe a realm and a method. `netrc export` writes above each entry
/// `# credstore: http://127.0.0.1:8080 realm "R" method basic` (the port only when it is not the
/// scheme's own, the realm and the method only when the space has them), and `netrc import` reads
/// it back, so that an export imported again changes nothing. curl, like the other readers of
/// netrc, skips a line that starts with `#`.
extension Netrc {
    /// Why a `# credstore:` line does not give its entry a space, in words for the user.
    package struct CommentRefusal: Error, Equatable {
        package var reason: String
    }

    /// What starts the line (curl reads a comment only at the start of a line).
    static let spaceCommentPrefix = "# credstore:"

    /// The comment line, without its line break, that names `space` for the entry below it.
    package static func spaceComment(for space: ProtectionSpace) -> String {
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        let scheme = space.protocol ?? "https"
        let ownPort = ProtectionSpace(host: space.host, port: 0, protocol: scheme, realm: nil).port
        var text = "\(spaceCommentPrefix) \(scheme)://\(host)\(space.port == ownPort ? "" : ":\(space.port)")"
        if let realm = space.realm { text += " realm \(quote(realm, always: true))" }
        if space.authenticationMethod != .default, let name = MethodName.allCases.first(where: {
            $0 != .any && $0 != .default && $0.authenticationMethod == space.authenticationMethod
        }) {
            text += " method \(name.rawValue)"
        }
        return text
    }

    /// The text after `# credstore:` of a comment line, or nil for any other comment.
    static func spaceCommentBody(_ line: String) -> String? {
        guard line.hasPrefix(spaceCommentPrefix) else { return nil }
        return String(line.dropFirst(spaceCommentPrefix.count))
    }

    /// The space a comment's `body` names for the entry of `machine`.
    ///
    /// - Returns: the space; nil when `machine` is no host a URL reads (the import refuses that
    ///   entry for its host, which is the reason to give); or the refusal of a comment that does
    ///   not name a space of that host. Never a message with anything but the host in it.
    static func space(fromComment body: String, machine: String) -> Result<ProtectionSpace?, CommentRefusal> {
        let advice = "; correct or delete that line"
        func refusal(_ text: String) -> Result<ProtectionSpace?, CommentRefusal> {
            .failure(CommentRefusal(reason: "the `\(spaceCommentPrefix)` line above it \(text)\(advice)"))
        }
        guard let words = commentWords(body), let url = words.first else {
            return refusal("names no URL, or a quoted value in it has no closing quote")
        }
        let reading: URLReading
        do {
            reading = try URLReading(url)
        } catch let error as CredentialStorageError {
            return refusal("names no URL credstore reads (\(error.message))")
        } catch {
            return refusal("names no URL credstore reads")
        }
        guard reading.rest.isEmpty || reading.rest == "/" else {
            return refusal("names a URL with a path; it names scheme://host[:port]")
        }
        guard reading.scheme == "https" || reading.scheme == "http" else {
            return refusal("names the scheme \(reading.scheme), and a netrc entry goes to http or https")
        }
        guard let host = try? URLReading.host(machine) else { return .success(nil) }
        guard reading.host == host else {
            return refusal("names another host (\(reading.host))")
        }
        var realm: String?
        var method: MethodName?
        var rest = words.dropFirst()
        while let word = rest.popFirst() {
            switch word {
            case "realm" where realm == nil:
                guard let value = rest.popFirst() else { return refusal("has `realm` without its value") }
                realm = value
            case "method" where method == nil:
                guard let value = rest.popFirst(), let name = MethodName(rawValue: value) else {
                    return refusal("names no method credstore knows (\(MethodName.allValueStrings.joined(separator: ", ")))")
                }
                // curl sends a netrc password as Basic, and `netrc export` writes no other: a
                // line that files the entry under Digest, NTLM or a form is not one it wrote.
                guard AuthenticationMethod.sentAsBasic.contains(name.authenticationMethod) else {
                    return refusal("names the method \(name.rawValue), and curl sends a netrc password as Basic (`method basic` or `method any`)")
                }
                method = name
            default:
                // The word is not repeated: a comment can hold anything, a password included.
                return refusal("holds words other than a URL, one `realm \"…\"` and one `method …`")
            }
        }
        return .success(ProtectionSpace(host: reading.host, port: reading.spacePort, protocol: reading.scheme,
                                        realm: realm, authenticationMethod: method?.authenticationMethod))
    }

    /// The words of a comment's body: separated by spaces or tabs, `"…"` quoted with the
    /// escapes of a netrc value; nil when a quote is not closed.
    private static func commentWords(_ body: String) -> [String]? {
        let scalars = Array(body.unicodeScalars)
        var words: [String] = []
        var position = 0
        while position < scalars.count {
            if scalars[position] == " " || scalars[position] == "\t" {
                position += 1
                continue
            }
            var word = String.UnicodeScalarView()
            if scalars[position] == "\"" {
                position += 1
                while true {
                    guard position < scalars.count else { return nil }
                    var scalar = scalars[position]
                    position += 1
                    if scalar == "\"" { break }
                    if scalar == "\\", position < scalars.count {
                        switch scalars[position] {
                        case "n": scalar = "\n"
                        case "r": scalar = "\r"
                        case "t": scalar = "\t"
                        default: scalar = scalars[position]
                        }
                        position += 1
                    }
                    word.append(scalar)
                }
            } else {
                while position < scalars.count, scalars[position] != " ", scalars[position] != "\t" {
                    word.append(scalars[position])
                    position += 1
                }
            }
            words.append(String(word))
        }
        return words
    }
}
