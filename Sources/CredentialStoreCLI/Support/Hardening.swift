#if canImport(Glibc)
import Glibc
#endif

/// Keeps secrets in this process's memory from leaving it through a core dump or a debugger.
public enum ProcessHardening {
    /// `PR_SET_DUMPABLE` from <linux/prctl.h>, which the Glibc module does not import.
    private static let setDumpable: Int32 = 4

    /// Disables core dumps (`RLIMIT_CORE` 0) and marks the process non-dumpable, which also refuses
    /// ptrace attach by other processes of the same user. Call it first thing in `main`.
    ///
    /// - Returns: whether both took effect.
    @discardableResult
    public static func apply() -> Bool {
        #if os(Linux)
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        let coreDisabled = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) == 0
        return coreDisabled && disableDumping()
        #else
        return false
        #endif
    }

    #if os(Linux)
    /// prctl(2) is variadic in C, so Swift does not import it; it is looked up and called with its
    /// five-word form, which the System V and AAPCS64 calling conventions pass alike.
    private static func disableDumping() -> Bool {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "prctl") else { return false }
        let prctl = unsafeBitCast(symbol, to: Prctl.self)
        return prctl(setDumpable, 0, 0, 0, 0) == 0
    }
    #endif
}
