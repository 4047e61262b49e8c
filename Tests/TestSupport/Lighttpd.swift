public import Foundation

/// lighttpd (Debian's `lighttpd` package), as the tests run it: in the foreground on 127.0.0.1
/// through ``LocalDaemon``, with the password files of its Basic and Digest auth.
public enum Lighttpd {
    public static let executable = "/usr/sbin/lighttpd"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    /// Starts lighttpd serving `root`, with `modules` loaded and `rules` (lighttpd configuration)
    /// after the server lines; it logs its errors to `directory/error.log`.
    public static func start(in directory: URL, root: URL, modules: [String], rules: String) throws -> LocalDaemon {
        let errorLog = directory.appendingPathComponent("error.log")
        return try LocalDaemon(name: "lighttpd", executable: executable, in: directory, errorLog: errorLog,
                               arguments: { ["-D", "-f", $0] }) { port in
            """
            server.document-root = "\(root.path)"
            server.port = \(port)
            server.bind = "127.0.0.1"
            server.errorlog = "\(errorLog.path)"
            server.modules = (\(modules.map { "\"\($0)\"" }.joined(separator: ", ")))
            \(rules)

            """
        }
    }

    /// Writes `directory/htpasswd` (SHA) and `directory/htdigest` (MD5, for `digestRealm`) holding
    /// `user` and `password`, and returns their URLs.
    public static func writePasswordFiles(
        in directory: URL, user: String, password: String, digestRealm: String
    ) throws -> (htpasswd: URL, htdigest: URL) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let htpasswd = directory.appendingPathComponent("htpasswd")
        let htdigest = directory.appendingPathComponent("htdigest")
        let lines = try LocalScripts.output(of: "lighttpd_passwords.py", [user, password, digestRealm]).split(separator: "\n")
        guard lines.count == 2 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "lighttpd_passwords.py printed \(lines.count) lines"])
        }
        try Data("\(lines[0])\n".utf8).write(to: htpasswd)
        try Data("\(lines[1])\n".utf8).write(to: htdigest)
        return (htpasswd, htdigest)
    }
}
