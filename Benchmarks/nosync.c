/*
 * nosync.so: LD_PRELOAD shim that turns fsync/fdatasync into no-ops.
 *
 * Used by Benchmarks/run only while *filling* the cached benchmark stores (100,000 one-at-a-time
 * durable sets would otherwise spend minutes waiting on the disk). No timed figure is taken
 * under it: every measurement runs without the shim, with SQLite's syncs as in production.
 *
 * Build: gcc -O2 -shared -fPIC -o nosync.so nosync.c
 */
int fsync(int fd) { (void)fd; return 0; }
int fdatasync(int fd) { (void)fd; return 0; }
