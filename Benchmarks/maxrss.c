/*
 * maxrss: runs a command and prints its peak resident set size on stderr, as
 * "maxrss_kb N" on the last line; exits with the command's status.
 *
 * Benchmarks/side_by_side.py measures the RSS of `credstore get` and `cref get` through this
 * small program rather than from Python's wait4: Linux keeps ru_maxrss across execve, so a
 * child forked from the ~18 MB Python harness would report at least the harness's size.
 *
 * Build: gcc -O2 -o maxrss maxrss.c
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: maxrss COMMAND [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 2; }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("execvp");
        _exit(127);
    }
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) { perror("wait4"); return 2; }
    fprintf(stderr, "maxrss_kb %ld\n", usage.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
