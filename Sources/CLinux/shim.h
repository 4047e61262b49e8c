#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
// What the CLI needs from <sys/prctl.h>. prctl(2) is variadic, which Swift does not import; this
// fixed-arity wrapper is, and it links in a static executable as well as a dynamic one.
#include <sys/prctl.h>

/// Marks the process non-dumpable (no core dump, no ptrace attach by the same user); 0 on success.
static inline int credstore_disable_dumping(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
#endif
