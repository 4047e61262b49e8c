#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
// What credstore needs from Linux that Swift does not import as it is: prctl(2) and syscall(2) are
// variadic, which Swift does not call; these fixed-arity wrappers are, and they link in a static
// executable as well as a dynamic one.
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Marks the process non-dumpable (no core dump, no ptrace attach by the same user); 0 on success.
static inline int credstore_disable_dumping(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/// add_key(2): adds (or updates) a key of `type` named `description` to `keyring`; its serial, or
/// -1 with errno set.
static inline long credstore_add_key(const char *type, const char *description, const void *payload, size_t length,
                                     int32_t keyring) {
    return syscall(SYS_add_key, type, description, payload, length, keyring);
}

/// keyctl(2) with its operation and up to four arguments; -1 with errno set on failure.
static inline long credstore_keyctl(int operation, unsigned long a2, unsigned long a3, unsigned long a4,
                                    unsigned long a5) {
    return syscall(SYS_keyctl, operation, a2, a3, a4, a5);
}

/// pipe2(2) with O_CLOEXEC, so that no other process spawned meanwhile inherits the pipe; pipe2 is
/// declared only under _GNU_SOURCE, which the Glibc module is not built with.
static inline int credstore_pipe_cloexec(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}
#endif
