#if canImport(Glibc)
import CLinux
import Glibc
#endif

/// Keeps secrets in this process's memory from leaving it through a core dump or a debugger.
package enum ProcessHardening {
    /// Disables core dumps (`RLIMIT_CORE` 0) and marks the process non-dumpable, which also refuses
    /// ptrace attach by other processes of the same user. Call it first thing in `main`.
    ///
    /// - Returns: whether both took effect.
    @discardableResult
    package static func apply() -> Bool {
        #if os(Linux)
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        let coreDisabled = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) == 0
        return coreDisabled && credstore_disable_dumping() == 0
        #else
        return false
        #endif
    }
}
