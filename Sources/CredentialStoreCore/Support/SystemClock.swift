#if canImport(Glibc)
import Glibc
#endif

/// The system's wall clock.
package struct SystemClock: StoreClock {
    package init() {}

    package func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
