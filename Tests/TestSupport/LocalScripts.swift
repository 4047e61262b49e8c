public import Foundation

/// The Python servers kept beside this file (`Tests/LocalServers/*.py`), found through the source
/// path so that no test carries server code inside a Swift string.
public enum LocalScripts {
    /// The script `name` (e.g. `"hostile_server.py"`) in this folder.
    public static func url(named name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(name)
    }
}
