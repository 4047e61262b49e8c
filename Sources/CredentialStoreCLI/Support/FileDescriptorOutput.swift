#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes straight to a file descriptor with write(2): no buffer to flush, so `watch` lines and
/// the error line are out before the process ends or waits.
struct FileDescriptorOutput: TextOutput {
    var fileDescriptor: Int32

    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                // A closed pipe or a full disk: there is no one left to tell.
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

/// write(2), named apart from `TextOutput.write(_:)`.
private func systemWrite(_ fileDescriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fileDescriptor, buffer, count)
}
