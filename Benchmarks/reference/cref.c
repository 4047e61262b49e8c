/*
 * cref: the C reference credential store, the floor that credstore is measured against.
 *
 * It is what an encrypted credential store costs with nothing but SQLite and libsodium: one
 * table, one blind-index key per protection space, one sealed password per row, no tiers, no
 * change log, no table seal, no key-derivation step (the key is already in memory, as it is in an
 * unlocked credstore). Whatever credstore spends above these figures is the price of its features.
 *
 *   cred(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID, journal_mode = WAL
 *   k = keyed BLAKE2b-256 of "https://h<i>.example.com:443/realm<i % 10>/user<i>"
 *   v = nonce (24) || XChaCha20-Poly1305-IETF(password, associated data = k)
 *
 * Credential i has the password "pw%014d" (16 bytes), the same credentials as credstore-bench
 * and the peer drivers in Benchmarks/peers use, so every store does the same work.
 *
 * Usage (the interface Benchmarks/side_by_side.py drives):
 *   cref bench DIR N LOOKUPS REPEATS   in-process timings as JSON rows on stdout (see bench())
 *   cref fill DB N                     credentials 0 ..< N into DB, one transaction
 *   cref get DB I                      look credential I up, print its password; exit 1 if absent
 *   cref put DB I                      insert credential I, one durable (synchronous = FULL) commit
 *   cref lookup DB N LOOKUPS           in-process lookups in DB (filled with `fill`, N credentials), opened
 *                                      as a store a program keeps open, JSON rows (see lookups())
 *   cref set DB N COUNT                COUNT durable inserts of new credentials into DB (which holds N),
 *                                      each timed, then deleted again; JSON rows (see durable_sets())
 *
 * Build: gcc -O2 -Wall -Wextra -o cref cref.c -lsodium -lsqlite3
 */
#include <sodium.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    INDEX_BYTES = 32, /* BLAKE2b-256: the width of credstore's blind index */
    PASSWORD_BYTES = 16,
    NONCE_BYTES = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
    TAG_BYTES = crypto_aead_xchacha20poly1305_ietf_ABYTES,
    SEALED_BYTES = NONCE_BYTES + PASSWORD_BYTES + TAG_BYTES,
    /* Lookups run before the timed ones in each repeat, as credstore-bench runs 20 calls before
     * its own: the first lookups after a bulk insert pay for faulting in the statement's code
     * paths, libsodium's and SQLite's, and for the branch predictors, which a lookup in a
     * long-running process does not. */
    WARM_UP_LOOKUPS = 20,
};

static unsigned char seal_key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
static unsigned char index_key[crypto_generichash_KEYBYTES];

static void fail(const char *what, sqlite3 *db) {
    fprintf(stderr, "cref: %s%s%s\n", what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
    exit(2);
}

/* Keys derived from fixed labels, not drawn at random: `fill`, `get` and `put` are separate
 * processes that must open each other's rows. */
static void load_keys(void) {
    static const char seal_label[] = "credstore reference: seal key";
    static const char index_label[] = "credstore reference: index key";
    if (sodium_init() < 0) fail("sodium_init failed", NULL);
    crypto_generichash(seal_key, sizeof seal_key, (const unsigned char *)seal_label, sizeof seal_label - 1, NULL, 0);
    crypto_generichash(index_key, sizeof index_key, (const unsigned char *)index_label, sizeof index_label - 1, NULL, 0);
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The blind index of credential i: hashing the protection-space string is part of every lookup,
 * as credstore hashes the canonical form of the space it is asked for. */
static void blind_index(long i, unsigned char index[INDEX_BYTES]) {
    char space[128];
    int length = snprintf(space, sizeof space, "https://h%ld.example.com:443/realm%ld/user%ld", i, i % 10, i);
    crypto_generichash(index, INDEX_BYTES, (const unsigned char *)space, (unsigned long long)length,
                       index_key, sizeof index_key);
}

static void password_of(long i, unsigned char password[PASSWORD_BYTES]) {
    char text[PASSWORD_BYTES + 1];
    snprintf(text, sizeof text, "pw%014ld", i);
    memcpy(password, text, PASSWORD_BYTES);
}

/* The index is the associated data, so a sealed password moved to another row does not open. */
static void seal(const unsigned char index[INDEX_BYTES], const unsigned char password[PASSWORD_BYTES],
                 unsigned char sealed[SEALED_BYTES]) {
    randombytes_buf(sealed, NONCE_BYTES);
    crypto_aead_xchacha20poly1305_ietf_encrypt(sealed + NONCE_BYTES, NULL, password, PASSWORD_BYTES,
                                               index, INDEX_BYTES, NULL, sealed, seal_key);
}

static int unseal(const unsigned char index[INDEX_BYTES], const void *sealed, int length,
                  unsigned char password[PASSWORD_BYTES]) {
    const unsigned char *bytes = sealed;
    if (length != SEALED_BYTES) return -1;
    return crypto_aead_xchacha20poly1305_ietf_decrypt(password, NULL, NULL, bytes + NONCE_BYTES,
                                                      PASSWORD_BYTES + TAG_BYTES, index, INDEX_BYTES,
                                                      bytes, seal_key);
}

static void run(sqlite3 *db, const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(sql, db);
}

/* WAL as credstore uses it. `synchronous` is the caller's: FULL where a figure stands for a
 * durable write, NORMAL where only the structure's cost is wanted. Page and cache sizes stay at
 * SQLite's defaults: the reference is plain SQLite, not a tuned one. */
static sqlite3 *open_store(const char *path, const char *synchronous) {
    sqlite3 *db = NULL;
    char sql[256];
    if (sqlite3_open(path, &db) != SQLITE_OK) fail("cannot open the store", db);
    snprintf(sql, sizeof sql,
             "PRAGMA journal_mode = WAL; PRAGMA synchronous = %s;"
             "CREATE TABLE IF NOT EXISTS cred(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;",
             synchronous);
    run(db, sql);
    return db;
}

static void remove_store(const char *path) {
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    char name[1100];
    for (size_t s = 0; s < sizeof suffixes / sizeof *suffixes; s++) {
        snprintf(name, sizeof name, "%s%s", path, suffixes[s]);
        unlink(name);
    }
}

/* Credentials from ..< to. In one transaction (a fill), or each in its own, which is one commit
 * and, under synchronous = FULL, one fsync per credential: what a user's `set` costs. */
static void insert(sqlite3 *db, long from, long to, int one_transaction) {
    sqlite3_stmt *statement;
    unsigned char index[INDEX_BYTES], password[PASSWORD_BYTES], sealed[SEALED_BYTES];
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO cred(k, v) VALUES (?, ?)", -1, &statement, NULL) != SQLITE_OK)
        fail("prepare insert", db);
    if (one_transaction) run(db, "BEGIN");
    for (long i = from; i < to; i++) {
        blind_index(i, index);
        password_of(i, password);
        seal(index, password, sealed);
        sqlite3_bind_blob(statement, 1, index, INDEX_BYTES, SQLITE_STATIC);
        sqlite3_bind_blob(statement, 2, sealed, SEALED_BYTES, SQLITE_STATIC);
        if (sqlite3_step(statement) != SQLITE_DONE) fail("insert", db);
        sqlite3_reset(statement);
    }
    if (one_transaction) run(db, "COMMIT");
    sqlite3_finalize(statement);
}

static sqlite3_stmt *prepare_lookup(sqlite3 *db) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db, "SELECT v FROM cred WHERE k = ?", -1, &statement, NULL) != SQLITE_OK)
        fail("prepare select", db);
    return statement;
}

/* One lookup as a credential store does it: hash, one B-tree descent, open the sealed password.
 * Returns 1 if credential i is there (its password in `password`), 0 if not. */
static int lookup(sqlite3 *db, sqlite3_stmt *statement, long i, unsigned char password[PASSWORD_BYTES]) {
    unsigned char index[INDEX_BYTES];
    int found = 0;
    blind_index(i, index);
    sqlite3_bind_blob(statement, 1, index, INDEX_BYTES, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) {
        if (unseal(index, sqlite3_column_blob(statement, 0), sqlite3_column_bytes(statement, 0), password) != 0)
            fail("a sealed password did not open", NULL);
        found = 1;
    } else if (rc != SQLITE_DONE) {
        fail("select", db);
    }
    sqlite3_reset(statement);
    return found;
}

/* Looks up a random existing credential and checks its password, so that no lookup is optimised
 * away and a wrong answer cannot pass for a fast one. Returns the time of the lookup alone. */
static double timed_lookup(sqlite3 *db, sqlite3_stmt *statement, long n) {
    unsigned char password[PASSWORD_BYTES], expected[PASSWORD_BYTES];
    long i = (long)randombytes_uniform((uint32_t)n);
    double start = seconds();
    int found = lookup(db, statement, i, password);
    double elapsed = seconds() - start;
    password_of(i, expected);
    if (!found || sodium_memcmp(password, expected, PASSWORD_BYTES) != 0) fail("a lookup returned the wrong password", NULL);
    return elapsed;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Both on a sorted array. The p99 is the nearest-rank one, as side_by_side.py computes it. */
static double median_of(const double *sorted, long count) {
    return count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
}

static double p99_of(const double *sorted, long count) {
    long rank = (99 * count + 99) / 100;
    return sorted[(rank < 1 ? 1 : rank > count ? count : rank) - 1];
}

static double sorted_median(double *values, long count) {
    qsort(values, (size_t)count, sizeof *values, ascending);
    return median_of(values, count);
}

static void emit(long n, const char *metric, double value, const char *unit, long samples) {
    printf("{\"peer\": \"c-ref\", \"n\": %ld, \"metric\": \"%s\", \"value\": %.9g, \"unit\": \"%s\", "
           "\"samples\": %ld, \"note\": \"\"}\n", n, metric, value, unit, samples);
}

/*
 * REPEATS rounds, each on fresh databases in DIR, so that every round measures the same store and
 * not one that earlier rounds have grown or fragmented:
 *   - N credentials inserted in one transaction (insert_bulk_1txn_s);
 *   - in that store, still open and so with its pages cached (a warm store, as credstore's
 *     lookups are measured in a store it holds open), WARM_UP_LOOKUPS untimed lookups, then
 *     LOOKUPS ones, each timed alone (lookup_med_us, lookup_p99_us over all rounds' lookups
 *     together): a median of single calls says what one lookup costs, where a mean over a loop
 *     would hide the tail that p99 shows. The credentials are drawn uniformly, so the lookups
 *     descend to leaves all over the B-tree rather than to one hot page;
 *   - N credentials inserted each in its own transaction, synchronous = NORMAL (no fsync per
 *     commit in WAL mode: the cost of SQLite's commit alone) and then synchronous = FULL (one
 *     fsync per commit: a durable write), reported whole and per insert.
 * Durations of a whole round's step are the median over the rounds, so one round that met a busy
 * disk does not move them.
 */
static int bench(const char *dir, long n, long lookups, long repeats) {
    char bulk_path[1024], normal_path[1024], full_path[1024];
    if (n < 1 || lookups < 1 || repeats < 1 || n > UINT32_MAX) {
        fprintf(stderr, "cref bench: N (below 2^32), LOOKUPS and REPEATS must be positive\n");
        return 2;
    }
    snprintf(bulk_path, sizeof bulk_path, "%s/cref-bulk.db", dir);
    snprintf(normal_path, sizeof normal_path, "%s/cref-each-normal.db", dir);
    snprintf(full_path, sizeof full_path, "%s/cref-each-full.db", dir);
    double *bulk = calloc((size_t)repeats, sizeof(double));
    double *each_normal = calloc((size_t)repeats, sizeof(double));
    double *each_full = calloc((size_t)repeats, sizeof(double));
    double *lookup_times = calloc((size_t)(repeats * lookups), sizeof(double));
    if (!bulk || !each_normal || !each_full || !lookup_times) fail("out of memory", NULL);

    for (long r = 0; r < repeats; r++) {
        remove_store(bulk_path);
        sqlite3 *db = open_store(bulk_path, "NORMAL");
        double start = seconds();
        insert(db, 0, n, 1);
        bulk[r] = seconds() - start;

        sqlite3_stmt *statement = prepare_lookup(db);
        for (int w = 0; w < WARM_UP_LOOKUPS; w++) timed_lookup(db, statement, n);
        for (long j = 0; j < lookups; j++) lookup_times[r * lookups + j] = timed_lookup(db, statement, n);
        sqlite3_finalize(statement);
        sqlite3_close(db);

        remove_store(normal_path);
        db = open_store(normal_path, "NORMAL");
        start = seconds();
        insert(db, 0, n, 0);
        each_normal[r] = seconds() - start;
        sqlite3_close(db);

        remove_store(full_path);
        db = open_store(full_path, "FULL");
        start = seconds();
        insert(db, 0, n, 0);
        each_full[r] = seconds() - start;
        sqlite3_close(db);
    }
    remove_store(bulk_path);
    remove_store(normal_path);
    remove_store(full_path);

    long samples = repeats * lookups;
    qsort(lookup_times, (size_t)samples, sizeof *lookup_times, ascending);
    double normal = sorted_median(each_normal, repeats), full = sorted_median(each_full, repeats);
    emit(n, "insert_bulk_1txn_s", sorted_median(bulk, repeats), "s", repeats);
    emit(n, "lookup_med_us", median_of(lookup_times, samples) * 1e6, "us", samples);
    emit(n, "lookup_p99_us", p99_of(lookup_times, samples) * 1e6, "us", samples);
    emit(n, "insert_each_txn_normal_s", normal, "s", repeats);
    emit(n, "insert_each_txn_normal_per_op_us", normal / (double)n * 1e6, "us", repeats);
    emit(n, "insert_each_txn_full_s", full, "s", repeats);
    emit(n, "insert_each_txn_full_per_op_us", full / (double)n * 1e6, "us", repeats);
    free(bulk);
    free(each_normal);
    free(each_full);
    free(lookup_times);
    return 0;
}

/* One process, one lookup: the floor of any credential CLI (start-up, dynamic loading, open,
 * one lookup, exit). Read-only, as `credstore get` opens its store. */
static int get(const char *path, long i) {
    sqlite3 *db = NULL;
    unsigned char password[PASSWORD_BYTES];
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) fail("cannot open the store", db);
    sqlite3_stmt *statement = prepare_lookup(db);
    int found = lookup(db, statement, i, password);
    sqlite3_finalize(statement);
    sqlite3_close(db);
    if (!found) return 1;
    fwrite(password, 1, PASSWORD_BYTES, stdout);
    putchar('\n');
    return 0;
}

/*
 * Lookups in an existing store, as credstore-bench times defaultCredential(for:): the database
 * filled earlier by `cref fill` (one transaction, then closed: the WAL checkpointed into the main
 * file), opened as a program opens its store, one prepared statement reused, every page read once
 * (the whole table scanned: the page cache warm, as credstore's store is warm after its own
 * warm-up), WARM_UP_LOOKUPS untimed lookups, then LOOKUPS ones, each timed alone.
 *
 * The file is memory-mapped up to 256 MiB, as credstore's connection maps its store: at 100,000
 * credentials and more, reading pages through mmap rather than read(2) is 10-15% faster, and the
 * reference should have what credstore has. Each lookup is its own read transaction over an empty
 * WAL, which costs a shared-lock fcntl pair and an fstat of the database (SQLite takes the page
 * count from the file when the WAL has no frames): credstore's lookups make the same calls.
 * `bench`, which looks up right after its bulk insert, reads the page count from the WAL instead,
 * about 0.5 µs less (docs/performance.md, "The C reference's denominator").
 */
static int lookups(const char *path, long n, long count) {
    if (n < 1 || count < 1 || n > UINT32_MAX) {
        fprintf(stderr, "cref lookup: N (below 2^32) and LOOKUPS must be positive\n");
        return 2;
    }
    double *times = calloc((size_t)count, sizeof(double));
    if (!times) fail("out of memory", NULL);
    sqlite3 *db = open_store(path, "FULL");
    run(db, "PRAGMA mmap_size = 268435456");
    run(db, "SELECT sum(length(v)) FROM cred");
    sqlite3_stmt *statement = prepare_lookup(db);
    for (int w = 0; w < WARM_UP_LOOKUPS; w++) timed_lookup(db, statement, n);
    for (long j = 0; j < count; j++) times[j] = timed_lookup(db, statement, n);
    sqlite3_finalize(statement);
    sqlite3_close(db);
    qsort(times, (size_t)count, sizeof *times, ascending);
    emit(n, "lookup_med_us", median_of(times, count) * 1e6, "us", count);
    emit(n, "lookup_p99_us", p99_of(times, count) * 1e6, "us", count);
    free(times);
    return 0;
}

/*
 * Durable writes into a store of N, as credstore-bench's `set DIR N COUNT` does them: COUNT new
 * credentials (indices N, N + 1, ...), each inserted in its own synchronous = FULL commit and timed
 * alone, then deleted again (untimed), so the database keeps its N for the next round.
 */
static int durable_sets(const char *path, long n, long count) {
    if (count < 1 || n + count > UINT32_MAX) {
        fprintf(stderr, "cref set: COUNT must be positive\n");
        return 2;
    }
    double *times = calloc((size_t)count, sizeof(double));
    if (!times) fail("out of memory", NULL);
    sqlite3 *db = open_store(path, "FULL");
    for (long j = 0; j < count; j++) {
        double start = seconds();
        insert(db, n + j, n + j + 1, 0);
        times[j] = seconds() - start;
    }
    sqlite3_stmt *statement;
    unsigned char index[INDEX_BYTES];
    if (sqlite3_prepare_v2(db, "DELETE FROM cred WHERE k = ?", -1, &statement, NULL) != SQLITE_OK) fail("prepare delete", db);
    run(db, "BEGIN");
    for (long j = 0; j < count; j++) {
        blind_index(n + j, index);
        sqlite3_bind_blob(statement, 1, index, INDEX_BYTES, SQLITE_STATIC);
        if (sqlite3_step(statement) != SQLITE_DONE) fail("delete", db);
        sqlite3_reset(statement);
    }
    run(db, "COMMIT");
    sqlite3_finalize(statement);
    sqlite3_close(db);
    double total = 0;
    for (long j = 0; j < count; j++) total += times[j];
    qsort(times, (size_t)count, sizeof *times, ascending);
    emit(n, "set_full_mean_us", total / (double)count * 1e6, "us", count);
    emit(n, "set_full_med_us", median_of(times, count) * 1e6, "us", count);
    emit(n, "set_full_p99_us", p99_of(times, count) * 1e6, "us", count);
    free(times);
    return 0;
}

static int parse_count(const char *text, long *value) {
    char *end;
    *value = strtol(text, &end, 10);
    return *text != '\0' && *end == '\0' && *value >= 0;
}

int main(int argc, char **argv) {
    long a, b, c;
    load_keys();
    if (argc == 6 && !strcmp(argv[1], "bench") && parse_count(argv[3], &a) && parse_count(argv[4], &b) &&
        parse_count(argv[5], &c))
        return bench(argv[2], a, b, c);
    if (argc == 5 && parse_count(argv[3], &a) && parse_count(argv[4], &b)) {
        if (!strcmp(argv[1], "lookup")) return lookups(argv[2], a, b);
        if (!strcmp(argv[1], "set")) return durable_sets(argv[2], a, b);
    }
    if (argc == 4 && parse_count(argv[3], &a)) {
        if (!strcmp(argv[1], "get")) return get(argv[2], a);
        if (!strcmp(argv[1], "fill") || !strcmp(argv[1], "put")) {
            /* A fill is setup, so one transaction and NORMAL; a put is a user's durable write. */
            int fill = !strcmp(argv[1], "fill");
            sqlite3 *db = open_store(argv[2], fill ? "NORMAL" : "FULL");
            if (fill) insert(db, 0, a, 1);
            else insert(db, a, a + 1, 0);
            sqlite3_close(db);
            return 0;
        }
    }
    fprintf(stderr, "usage: cref bench DIR N LOOKUPS REPEATS | fill DB N | get DB I | put DB I | lookup DB N LOOKUPS | set DB N COUNT\n");
    return 2;
}
