#!/usr/bin/env python3
"""credstore beside the C reference and the peer credential stores, in one run.

Normally started by Benchmarks/run, which builds the harness package (Benchmarks/Harness) and
both builds of `credstore` (the shipped static one and a plain release one) first. Writes into --out
(default bench-out/): results.jsonl (every row), results.md (the tables), performance.svg (the
plot) and run.log; then, unless --no-docs, puts the tables between the GENERATED markers of
docs/performance.md and the plot in docs/performance.svg.

Everything it runs is in this folder: the C reference (reference/cref.c, built here with gcc),
the peer drivers (peers/bench_*.py; --peers-dir or CREDSTORE_PEERS_DIR for others), maxrss.c and
nosync.c. All of them print the same JSON rows {"peer", "n", "metric", "value", "unit", "samples",
"note"}, as credstore-bench does. Every ratio is against the C reference measured in this same
run. No third-party Python package is needed: the SVG is written by hand.
"""
import argparse
import datetime
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BEGIN = "<!-- BEGIN GENERATED: Benchmarks/run -->"
END = "<!-- END GENERATED: Benchmarks/run -->"

ROWS = []
LOG = None


def log(msg=""):
    print(msg, flush=True)
    if LOG:
        LOG.write(msg + "\n")
        LOG.flush()


def add(peer, n, metric, value, unit, samples=1, note=""):
    row = {"peer": peer, "n": n, "metric": metric, "value": value, "unit": unit,
           "samples": samples, "note": note}
    ROWS.append(row)
    log("  %-22s n=%-7s %-26s %12.4f %-3s (k=%s) %s" % (peer, n, metric, value, unit, samples, note))


def get(peer, n, metric):
    for row in reversed(ROWS):
        if row["peer"] == peer and row["n"] == n and row["metric"] == metric:
            return row["value"]
    return None


def med(xs):
    return statistics.median(xs)


def p99(xs):
    s = sorted(xs)
    return s[max(1, min(len(s), math.ceil(0.99 * len(s)))) - 1]


def run_rows(argv, env=None, keep=None, drop_note=None, rename=None):
    """Runs a tool that prints JSON rows; records them (those whose metric passes keep), the
    metrics named in `rename` under their new names."""
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("%s failed (rc=%d): %s" % (" ".join(argv), p.returncode,
                                                      p.stderr.decode(errors="replace")[-800:]))
    for line in p.stdout.decode().splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if keep and not keep(row):
            continue
        row["metric"] = (rename or {}).get(row["metric"], row["metric"])
        add(row["peer"], row["n"], row["metric"], row["value"], row["unit"], row.get("samples", 1),
            row.get("note", "") or (drop_note or ""))


def password(i):
    return "pw%014d" % i


def picks(n, k, seed=1234):
    rng = random.Random(seed + n)
    return [rng.randrange(n) for _ in range(k)]


def fmt(x, digits=3):
    """A figure with about three significant digits."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - mag)
    return "{:,.{}f}".format(x, decimals)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return fmt(a / b, 2) + "×"


def sizes_label(n):
    return "{:,}".format(n)


# ---------------------------------------------------------------------------------------------
# measuring


def build_helpers(out):
    cref_src = os.path.join(HERE, "reference", "cref.c")
    if not os.path.exists(cref_src):
        raise SystemExit("C reference not found at %s (Benchmarks/reference/cref.c of this repository)" % cref_src)
    cref = os.path.join(out, "cref")
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", cref, cref_src, "-lsodium", "-lsqlite3"], check=True)
    nosync = os.path.join(out, "nosync.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", nosync, os.path.join(HERE, "nosync.c")], check=True)
    maxrss = os.path.join(out, "maxrss")
    subprocess.run(["gcc", "-O2", "-o", maxrss, os.path.join(HERE, "maxrss.c")], check=True)
    return cref, nosync, maxrss


def rows_of(argv, env=None):
    """The JSON rows a tool prints, by metric (the last of each), without recording them."""
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("%s failed (rc=%d): %s" % (" ".join(argv), p.returncode,
                                                      p.stderr.decode(errors="replace")[-800:]))
    out = {}
    for line in p.stdout.decode().splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            out[row["metric"]] = row["value"]
    return out


def c_db(work, n):
    return os.path.join(work, "c-%d.db" % n)


def git_file(work, n):
    return os.path.join(work, "git-credentials-%d" % n)


def fill_stores(bench, cref, nosync, work, sizes, import_sizes):
    """Every store the run reads, filled once and cached in WORK: credstore's (one public `set`
    per credential, fsync off: setup, never timed), the C reference's (one transaction), and
    git-credential-store's plain-text file (written directly in its format: one URL a line)."""
    env = dict(os.environ, LD_PRELOAD=nosync)
    for n in sizes:
        run_rows([bench, "fill", work, str(n)], env=env, keep=lambda r: r["metric"] != "peak_rss_kb"
                 and not r["metric"].startswith("rss_"))
    for n in import_sizes:
        run_rows([bench, "fill", work, str(n), "synchronizable"], env=env,
                 keep=lambda r: r["metric"] == "fill_s", rename={"fill_s": "fill_sync_s"})
    for n in sizes:
        db, marker = c_db(work, n), c_db(work, n) + ".filled"
        if not os.path.exists(marker):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)
            t = time.time()
            subprocess.run([cref, "fill", db, str(n)], check=True)
            add("c-ref", n, "fill_s", time.time() - t, "s", 1, "one transaction")
            open(marker, "w").close()
        path = git_file(work, n)
        if not os.path.exists(path + ".filled"):
            with open(path, "w") as f:
                for i in range(n):
                    f.write("https://user%d:%s@h%d.example.com\n" % (i, password(i), i))
            os.chmod(path, 0o600)
            open(path + ".filled", "w").close()


def paired(rounds, first, second):
    """`rounds` rounds of first() and second(), alternating which goes first: both see the same
    minutes of a machine whose speed drifts by tens of percent within minutes."""
    xs, ys = [], []
    for r in range(rounds):
        if r % 2 == 0:
            xs.append(first())
            ys.append(second())
        else:
            ys.append(second())
            xs.append(first())
    return xs, ys


def warm_page_cache(paths):
    """Reads every file of PATHS (files or folders) once, so that their pages are in the page cache."""
    for path in paths:
        files = [os.path.join(path, f) for f in sorted(os.listdir(path))] if os.path.isdir(path) else [path]
        for name in files:
            if not os.path.isfile(name):
                continue
            with open(name, "rb") as f:
                while f.read(1 << 20):
                    pass


def measure_lookups(bench, cref, work, sizes, a):
    """credstore-bench lookup and cref lookup, one process each per round, alternating."""
    per = max(50, a.lookups // a.lookup_rounds)
    for n in sizes:
        # Both stores read once into the page cache first: the steady state of a store in use. Left
        # to chance, the small C file stays cached while credstore's (7× larger) is partly read
        # from disk, and the first rounds time the disk (669 µs a lookup at 1,000,000).
        warm_page_cache([os.path.join(work, "perm-%d" % n), c_db(work, n)])
        ours, theirs = paired(a.lookup_rounds, lambda: rows_of([bench, "lookup", work, str(n), str(per)]),
                              lambda: rows_of([cref, "lookup", c_db(work, n), str(n), str(per)]))
        note = "%d rounds of %d, alternating with the C reference, both stores read into the page cache first; median of the rounds' medians" % (a.lookup_rounds, per)
        for metric in ("lookup_med_us", "lookup_p99_us", "credentials_med_us", "credentials_p99_us"):
            add("credstore", n, metric, med([o[metric] for o in ours]), "us", a.lookup_rounds * per, note)
        for metric in ("lookup_med_us", "lookup_p99_us"):
            add("c-ref", n, metric, med([t[metric] for t in theirs]), "us", a.lookup_rounds * per, note)
        add("credstore", n, "lookup_over_c_ratio", med([o["lookup_med_us"] / t["lookup_med_us"] for o, t in zip(ours, theirs)]),
            "x", a.lookup_rounds, "median of the rounds' ratios")
        add("credstore", n, "lookup_peak_rss_kb", max(o["peak_rss_kb"] for o in ours), "kB", a.lookup_rounds,
            "credstore-bench lookup, whole process")


def measure_durable(bench, cref, work, sizes, a):
    """Durable writes: credstore-bench `set` (a new credential each, its own transaction,
    synchronous = FULL) and cref `set` (synchronous = FULL insert), in alternating small batches,
    into a fresh store (N = 0) and into the stores of N (each side removes its writes again)."""
    for n in [0] + list(sizes):
        tmp = tempfile.mkdtemp(prefix="credstore-bench-durable.", dir=work)
        try:
            def ours():
                if n == 0:
                    d = tempfile.mkdtemp(dir=tmp)
                    r = rows_of([bench, "set", d, "0", str(a.durable_count)])
                    shutil.rmtree(d, ignore_errors=True)
                    return r
                return rows_of([bench, "set", work, str(n), str(a.durable_count)])

            def theirs():
                if n == 0:
                    db = os.path.join(tmp, "fresh-%d.db" % random.randrange(1 << 30))
                    return rows_of([cref, "set", db, "0", str(a.durable_count)])
                return rows_of([cref, "set", c_db(work, n), str(n), str(a.durable_count)])
            os_, cs = paired(a.durable_rounds, ours, theirs)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        note = "%d alternating batches of %d durable writes per side%s" % (
            a.durable_rounds, a.durable_count, ", fresh store" if n == 0 else ", store of N")
        add("credstore", n, "set_mean_us", med([o["set_mean_us"] for o in os_]), "us", a.durable_rounds, note)
        add("credstore", n, "set_med_us", med([o["set_med_us"] for o in os_]), "us", a.durable_rounds, note)
        add("c-ref", n, "set_full_mean_us", med([c["set_full_mean_us"] for c in cs]), "us", a.durable_rounds, note)
        add("credstore", n, "set_over_c_ratio", med([o["set_mean_us"] / c["set_full_mean_us"] for o, c in zip(os_, cs)]),
            "x", a.durable_rounds, "median of the batches' ratios of means")


def measure_open_verify(bench, work, sizes, a):
    for n in sizes:
        run_rows([bench, "open", work, str(n), str(a.open_count), str(a.open_seconds)],
                 keep=lambda r: not r["metric"].startswith("rss_"), rename={"peak_rss_kb": "open_peak_rss_kb"})
        run_rows([bench, "verify", work, str(n), str(a.verify_count), str(a.open_seconds)],
                 keep=lambda r: not r["metric"].startswith("rss_"), rename={"peak_rss_kb": "verify_peak_rss_kb"})


def measure_imports(bench, work, import_sizes, a):
    for n in import_sizes:
        repeats = a.import_repeats if n < 1000000 else 1
        # With the split of the resident set at exit: a store's mapped pages are the kernel's page
        # cache, anonymous memory is the process's own.
        run_rows([bench, "import", work, str(n), str(repeats), "alone"],
                 rename={"peak_rss_kb": "import_peak_rss_kb", "rss_anon_end_kb": "import_rss_anon_end_kb",
                         "rss_file_end_kb": "import_rss_file_end_kb"})


# The forms of `credstore get` measured, each as (name, argv after the binary, expected password,
# stdin). i is the credential looked up, k its proxy.
def get_forms(i, db):
    url, realm = "https://h%d.example.com" % i, "realm%d" % (i % 10)
    k = i % PROXIES
    git_realm = "protocol=https\nhost=h%d.example.com\nwwwauth[]=Basic realm=\"%s\"\n\n" % (i, realm)
    git_plain = "protocol=https\nhost=h%d.example.com\n\n" % i
    return [
        ("get URL --realm R", ["get", url, "--realm", realm, "--store", db], password(i), None),
        ("get URL", ["get", url, "--store", db], password(i), None),
        ("get URL --realm R --method basic", ["get", url, "--realm", realm, "--method", "basic", "--store", db], password(i), None),
        ("get URL --realm R --method any", ["get", url, "--realm", realm, "--method", "any", "--store", db], password(i), None),
        ("get URL --realm R --user U", ["get", url, "--realm", realm, "--user", "user%d" % i, "--store", db], password(i), None),
        ("get URL --realm R --json", ["get", url, "--realm", realm, "--json", "--store", db], password(i), None),
        ("get URL --proxy http", ["get", "http://proxy%d.example.com:3128" % k, "--proxy", "http", "--store", db], password(k), None),
        ("git-credential get (wwwauth[] realm)", ["git-credential", "get", "--store", db], "password=" + password(i), git_realm),
        ("git-credential get (protocol, host)", ["git-credential", "get", "--store", db], "password=" + password(i), git_plain),
    ]


PROXIES = 16  # proxy credentials in each permanent store (Benchmarks/Harness: `proxies`)
GET_FORMS = [f[0] for f in get_forms(0, "")]


def timed_process(argv, expect=None, stdin=None, env=None):
    """Wall time of one process, timed from this harness around subprocess.run (spawn to reaped),
    as the peer scripts time theirs."""
    t = time.perf_counter()
    p = subprocess.run(argv, input=stdin.encode() if stdin else None, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t
    if p.returncode != 0 or (expect is not None and expect not in p.stdout.decode(errors="replace")):
        raise RuntimeError("%s: rc=%d out=%r err=%r" % (" ".join(argv), p.returncode, p.stdout[-200:], p.stderr[-300:]))
    return elapsed


def peak_rss(maxrss, argv, expect=None, stdin=None, env=None):
    """Peak RSS in kB of one process, through the maxrss helper (see Benchmarks/maxrss.c)."""
    p = subprocess.run([maxrss] + argv, input=stdin.encode() if stdin else None, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    err = p.stderr.decode(errors="replace").strip().splitlines()
    if p.returncode != 0 or not err or not err[-1].startswith("maxrss_kb ") or (
            expect is not None and expect not in p.stdout.decode(errors="replace")):
        raise RuntimeError("maxrss %s: rc=%d err=%r" % (" ".join(argv), p.returncode, err[-3:]))
    return int(err[-1].split()[1])


def measure_get(cref, builds, maxrss, work, sizes, a):
    """One process per lookup: every form of `credstore get` and `git-credential get` of each
    build, `cref get` and `git credential-store get`, one after the other for each credential
    picked, so that all see the same moment. A form slower than --form-seconds in total stops
    early (at least 3 samples): some forms scan the whole store."""
    home = tempfile.mkdtemp(prefix="credstore-bench-git.")
    git_env = dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    try:
        spawn = [timed_process(["true"]) for _ in range(a.get_runs)]
        add("harness", 0, "spawn_true_med_ms", med(spawn) * 1e3, "ms", len(spawn), "spawn /bin/true from this harness")
        for n in sizes:
            db = os.path.join(work, "perm-%d" % n, "credentials.db")
            runners = []  # (peer, form, argv(i), expect(i), stdin(i), env)
            runners.append(("c-ref-cli", "cref get", lambda i: [cref, "get", c_db(work, n), str(i)],
                            lambda i: password(i), lambda i: None, None))
            runners.append(("git-credential-store", "git credential-store get",
                            lambda i: ["git", "credential-store", "--file", git_file(work, n), "get"],
                            lambda i: "password=" + password(i),
                            lambda i: "protocol=https\nhost=h%d.example.com\n\n" % i, git_env))
            for build, binary in builds:
                for k, form in enumerate(GET_FORMS):
                    runners.append(("credstore-%s" % build, form,
                                    (lambda b, k: lambda i: [b] + get_forms(i, db)[k][1])(binary, k),
                                    (lambda k: lambda i: get_forms(i, db)[k][2])(k),
                                    (lambda k: lambda i: get_forms(i, db)[k][3])(k), None))
            times = {(p, f): [] for p, f, *_ in runners}  # (j, seconds)
            rss = {(p, f): [] for p, f, *_ in runners}
            spent = {(p, f): 0.0 for p, f, *_ in runners}
            failed = {}
            for j, i in enumerate(picks(n, a.get_runs + 2)):
                for peer, form, argv, expect, stdin, env in runners:
                    key = (peer, form)
                    if key in failed or (times[key] and spent[key] > a.form_seconds):
                        continue
                    try:
                        if j == 0 or (times[key] and times[key][-1][1] > 1.0):
                            # The first run (a warm-up, not kept unless the form is slow) and a form
                            # that scans the store: timed through maxrss, which adds about a
                            # millisecond, so that one run gives both figures.
                            t0 = time.perf_counter()
                            rss[key].append(peak_rss(maxrss, argv(i), expect(i), stdin(i), env))
                            t = time.perf_counter() - t0
                        else:
                            t = timed_process(argv(i), expect(i), stdin(i), env)
                            if j < a.rss_runs and spent[key] + t <= a.form_seconds:
                                rss[key].append(peak_rss(maxrss, argv(i), expect(i), stdin(i), env))
                        spent[key] += t
                        times[key].append((j, t))
                    except RuntimeError as e:
                        failed[key] = str(e)
                        log("  %s %s at %s failed: %s" % (peer, form, sizes_label(n), str(e)[:300]))
            for peer, form, *_ in runners:
                key = (peer, form)
                # The first two of each form warm the page cache and the binaries; a form slow
                # enough to have fewer runs keeps them all.
                ts = [t for j, t in times[key] if j >= 2] or [t for _, t in times[key]]
                if not ts:
                    continue
                note = form + (" (stopped after %.0f s)" % spent[key] if spent[key] > a.form_seconds else "")
                add(peer, n, "get_med_ms|" + form, med(ts) * 1e3, "ms", len(ts), note)
                add(peer, n, "get_p99_ms|" + form, p99(ts) * 1e3, "ms", len(ts), note)
                if rss[key]:
                    add(peer, n, "get_rss_max_kb|" + form, max(rss[key]), "kB", len(rss[key]), note + ", peak RSS")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def module_of(symbol):
    """Which part of the binary a symbol belongs to: the module of a mangled Swift name
    ($s<length><Module>...), else a C library by its prefixes."""
    name = symbol.lstrip("_")
    if name.startswith("$s") or name.startswith("$S"):
        k, digits = 2, ""
        while k < len(name) and name[k].isdigit():
            digits += name[k]
            k += 1
        if digits:
            module = name[k:k + int(digits)]
            return {"s": "Swift (stdlib)", "So": "C types", "SC": "C types"}.get(module, module)
        return "Swift (stdlib)" if name[2:3] in ("S", "s") else "Swift (other)"
    low = symbol.lower()
    if low.startswith("sqlite3") or "sqlite" in low:
        return "SQLite"
    if low.startswith(("crypto_", "sodium", "randombytes", "_sodium", "escrypt", "blake2b", "argon2")):
        return "libsodium"
    if "icu" in low or low.startswith(("u_", "ucol", "ubrk", "unorm", "uloc", "ucnv", "ures", "udata", "utf8_", "utext",
                                      "uprv", "ucase", "uset", "uregex", "udat", "unum", "ucal", "ubidi", "uscript")):
        return "ICU"
    if low.startswith(("swift_", "swift::", "_swift")):
        return "Swift runtime"
    return "other C/C++ (libc, libstdc++, dispatch, Foundation's C parts …)"


def measure_binaries(builds):
    for build, binary in builds:
        size = os.path.getsize(binary)
        stripped = binary + ".stripped"
        subprocess.run(["strip", "-o", stripped, binary], check=True)
        add("binary", 0, "bytes|" + build, size, "B", 1, "credstore, %s build, as built" % build)
        add("binary", 0, "stripped_bytes|" + build, os.path.getsize(stripped), "B", 1, "strip -o")
        out = subprocess.run(["size", "-A", stripped], stdout=subprocess.PIPE).stdout.decode().splitlines()
        sections = {}
        for line in out:
            parts = line.split()
            if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
                sections[parts[0]] = int(parts[1])
        for name in (".text", ".rodata", ".data.rel.ro", ".eh_frame", ".data", ".bss"):
            if name in sections:
                add("binary", 0, "section|%s|%s" % (build, name), sections[name], "B", 1, "size -A of the stripped binary")
        os.unlink(stripped)
        nm = subprocess.run(["nm", "-S", "--size-sort", binary], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        groups = {}
        for line in nm.stdout.decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[2] in "tTrRdDbBvVwW":
                groups[module_of(parts[3])] = groups.get(module_of(parts[3]), 0) + int(parts[1], 16)
        for module, total in sorted(groups.items(), key=lambda x: -x[1])[:12]:
            add("binary", 0, "module|%s|%s" % (build, module), total, "B", 1, "sum of nm -S symbol sizes")


def peer_plan(mode):
    plan = [
        ("git-credential-store", ["bench_git.py"], lambda: shutil.which("git") is not None),
        ("secret-tool+gnome-keyring", ["bench_secret_tool.py"],
         lambda: all(shutil.which(x) for x in ("secret-tool", "gnome-keyring-daemon", "dbus-run-session"))),
        ("pass+gpg", ["bench_pass.py"], lambda: all(shutil.which(x) for x in ("pass", "gpg"))),
    ]
    if mode == "all":
        have_kr = lambda: subprocess.run([sys.executable, "-c", "import keyring, keyrings.cryptfile, keyrings.alt"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        plan += [
            ("pykeyring+cryptfile", ["bench_pykeyring.py", "--backend", "cryptfile"], have_kr),
            ("pykeyring+alt-encrypted", ["bench_pykeyring.py", "--backend", "alt"], have_kr),
        ]
    return plan


PEER_NOT_RUN = 69  # a driver's exit status when its store cannot run here (Benchmarks/peers/peerbench.py)


def measure_peers(peers_dir, out, mode, sizes, timeout):
    status = []
    if mode == "none":
        return [("all peers", "not run (--peers none)")]
    jsonl = os.path.join(out, "peers.jsonl")
    open(jsonl, "w").close()
    setup = os.path.relpath(os.path.join(peers_dir, "setup.sh"), REPO)
    for name, script, available in peer_plan(mode):
        if not available():
            msg = "not run: not installed (run `bash %s` once)" % setup
            log("peer %s: %s" % (name, msg))
            status.append((name, msg))
            continue
        argv = [sys.executable, os.path.join(peers_dir, script[0])] + script[1:] + [
            "--out", jsonl, "--sizes", ",".join(str(s) for s in sizes)]
        log("=== peer %s: %s" % (name, " ".join(argv)))
        t = time.time()
        try:
            p = subprocess.run(argv, cwd=peers_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout)
            if LOG:
                LOG.write(p.stdout.decode(errors="replace"))
            last = p.stdout.decode(errors="replace").strip().splitlines()[-1:]
            if p.returncode == 0:
                st = "ok"
            elif p.returncode == PEER_NOT_RUN and last and last[0].startswith("not run"):
                st = last[0]  # the driver's own reason: the store cannot run on this machine
            else:
                st = "FAILED rc=%d: %s" % (p.returncode, last[0] if last else "")
        except subprocess.TimeoutExpired:
            st = "FAILED: timed out after %d s" % timeout
        log("peer %s: %s (%.0f s)" % (name, st, time.time() - t))
        status.append((name, "%s, %.0f s" % (st, time.time() - t)))
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            ROWS.append(row)
    # Sizes a driver chose not to measure (a fill capped, say) go into its status, with the reason.
    for k, (name, st) in enumerate(status):
        skipped = ["%s not run (%s)" % (sizes_label(r["n"]), r["note"]) for r in ROWS
                   if r["peer"] == name and r["metric"] == "not_run" and r["n"] > 0]
        if skipped:
            status[k] = (name, "%s; %s" % (st, "; ".join(skipped)))
    return status


# ---------------------------------------------------------------------------------------------
# reporting


def mb(kb):
    return None if kb is None else kb / 1024.0


def get_samples(peer, n, metric):
    for row in reversed(ROWS):
        if row["peer"] == peer and row["n"] == n and row["metric"] == metric:
            return row["samples"]
    return None


def verdict(values, limit):
    """'yes' when every value is within limit, '**no**' when one is not, '–' when none measured."""
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    return "yes" if all(v <= limit for v in values) else "**no**"


def one_table(sizes, peer_sizes, builds):
    """Every figure of the run, one row each, a column per store size: the value, its ratio to the
    C reference measured beside it, a budget and whether it holds at every size."""
    cols = [0] + list(sizes)
    head = ["| figure | fresh | " + " | ".join(sizes_label(n) for n in sizes) + " | budget | met |",
            "|---|" + "---:|" * len(cols) + "---|:---:|"]
    lines = []

    def line(label, cell, budget="", met="–"):
        cells = [cell(n) for n in cols]
        if not any(cells):
            return
        lines.append("| %s | %s | %s | %s |" % (label, " | ".join(c or "" for c in cells), budget, met))

    def value(peer, metric, unit, scale=1.0, ratio_metric=None, ref=None, rss_metric=None):
        def cell(n):
            v = get(peer, n, metric)
            if v is None:
                return ""
            text = fmt(v * scale) + (" " + unit if unit else "")
            if ratio_metric:
                r = get(peer, n, ratio_metric)
                if r is not None:
                    text += " (%s×)" % fmt(r, 2)
            elif ref:
                r = get(ref[0], n, ref[1])
                if r is not None:
                    text += " (%s)" % ratio(v, r)
            if rss_metric:
                m = get(peer, n, rss_metric)
                if m is not None:
                    text += ", %s MB" % fmt(m / 1024)
            return text
        return cell

    def ratios(peer, metric, ref):
        out = []
        for n in sizes:
            v, r = get(peer, n, metric), get(ref[0], n, ref[1])
            out.append(v / r if v is not None and r else None)
        return out

    lookup_ratios = [get("credstore", n, "lookup_over_c_ratio") for n in sizes]
    growth = None
    o1, o2 = get("credstore", sizes[0], "lookup_med_us"), get("credstore", sizes[-1], "lookup_med_us")
    c1, c2 = get("c-ref", sizes[0], "lookup_med_us"), get("c-ref", sizes[-1], "lookup_med_us")
    if None not in (o1, o2, c1, c2) and len(sizes) > 1:
        growth = (o2 / o1) / (c2 / c1)
    lookup_ok = verdict(lookup_ratios, 1.3)
    if lookup_ok == "yes" and growth is not None and growth > 1.0:
        lookup_ok = "**no**"
    line("**`defaultCredential(for:)`**, median µs (×C: median of the paired rounds' ratios)",
         value("credstore", "lookup_med_us", "", ratio_metric="lookup_over_c_ratio"),
         "≤ 1.3× C at every N; growth %s → %s no steeper than C's (here %s× C's)" % (
             sizes_label(sizes[0]), sizes_label(sizes[-1]), fmt(growth, 2) if growth else "–"), lookup_ok)
    line("`credentials(for:)`, median µs (×C lookup)", value("credstore", "credentials_med_us", "", ref=("c-ref", "lookup_med_us")))
    line("C reference lookup (`cref lookup`), median µs", value("c-ref", "lookup_med_us", ""))
    line("lookup p99 µs, credstore (C)", lambda n: "" if get("credstore", n, "lookup_p99_us") is None else "%s (%s)" % (
        fmt(get("credstore", n, "lookup_p99_us")), fmt(get("c-ref", n, "lookup_p99_us"))))
    line("**durable `set`** of a new credential, mean µs (×C: median of the paired batches' ratios)",
         value("credstore", "set_mean_us", "", ratio_metric="set_over_c_ratio"),
         "≤ 1.3× C's synchronous=FULL insert at every N",
         verdict([get("credstore", n, "set_over_c_ratio") for n in cols], 1.3))
    line("C reference synchronous=FULL insert (`cref set`), mean µs", value("c-ref", "set_full_mean_us", ""))
    line("**open** (key file), median ms (whatever the library's default open checks)", value("credstore", "open_med_ms", "ms"),
         "≤ 5 ms at 1,000,000", verdict([get("credstore", n, "open_med_ms") for n in cols if n >= 1000000], 5.0))
    line("open + first `defaultCredential(for:)`, median ms", value("credstore", "open_lookup_med_ms", "ms"))
    line("first open + first lookup of a process, ms", value("credstore", "open_first_lookup_first_ms", "ms"))
    line("**`verify()`**, median ms", value("credstore", "verify_med_ms", "ms"))
    line("**export** of N synchronizable items (recipient bundle), s", value("credstore", "export_s", "s"))
    imp = get("credstore", 100000, "import_s")
    line("**import** of that bundle into an empty store (a process of its own), s", value("credstore", "import_s", "s"),
         "≤ 2 s at 100,000; bounded memory at 1,000,000", "–" if imp is None else ("yes" if imp <= 2 else "**no**"))
    line("import: largest anonymous resident set of the import's process, MB (before the import)",
         lambda n: "" if get("credstore", n, "import_peak_anon_kb") is None else "%s (%s)" % (
             fmt(get("credstore", n, "import_peak_anon_kb") / 1024), fmt((get("credstore", n, "import_anon_before_kb") or 0) / 1024)),
         "bounded at 1,000,000", "–")
    line("export + import harness process: peak RSS MB (the export's, with the stores' mapped pages)",
         lambda n: "" if get("credstore", n, "import_peak_rss_kb") is None else fmt(get("credstore", n, "import_peak_rss_kb") / 1024))
    line("C reference `cref get`, one process, median ms, peak RSS", value("c-ref-cli", "get_med_ms|cref get", "ms",
                                                                         rss_metric="get_rss_max_kb|cref get"))
    for build, _ in builds:
        limit = 1.5 if build == "static" else 3.0
        for form in GET_FORMS:
            metric = "get_med_ms|" + form
            rs = ratios("credstore-" + build, metric, ("c-ref-cli", "get_med_ms|cref get"))
            rss_ok = verdict([mb(get("credstore-" + build, n, "get_rss_max_kb|" + form)) for n in sizes], 15)
            ok = verdict(rs, limit)
            line("`credstore %s`, %s build, median ms (×C), peak RSS" % (form, "shipped static" if build == "static" else "plain release"),
                 value("credstore-" + build, metric, "ms", ref=("c-ref-cli", "get_med_ms|cref get"),
                       rss_metric="get_rss_max_kb|" + form),
                 "≤ %g× C; ≤ 15 MB" % limit, "–" if ok == "–" else ("yes" if ok == "yes" and rss_ok == "yes" else "**no**"))
    line("`git credential-store --file F get`, median ms (×C), peak RSS",
         value("git-credential-store", "get_med_ms|git credential-store get", "ms", ref=("c-ref-cli", "get_med_ms|cref get"),
               rss_metric="get_rss_max_kb|git credential-store get"))
    for peer in PEER_ORDER:
        if peer == "git-credential-store":
            continue
        inproc = not peer.endswith("-cli") and peer.startswith("pykeyring")
        line("peer %s, %s, median ms (×C)" % (peer, "in-process" if inproc else "one process"),
             value(peer, "lookup_med_ms", "ms", ref=("c-ref-cli", "get_med_ms|cref get") if not inproc else None))
    line("fill (setup, fsync off): credstore one `set` each, s", value("credstore", "fill_s", "s"))
    line("fill (setup): C reference, one transaction, s", value("c-ref", "fill_s", "s"))
    line("`credstore-bench lookup` process, peak RSS MB", lambda n: "" if get("credstore", n, "lookup_peak_rss_kb") is None
         else fmt(get("credstore", n, "lookup_peak_rss_kb") / 1024))
    return head + lines


def binary_lines(builds):
    out = []
    for build, _ in builds:
        size, stripped = get("binary", 0, "bytes|" + build), get("binary", 0, "stripped_bytes|" + build)
        if size is None:
            continue
        sections = ["%s %s MB" % (r["metric"].split("|")[2], fmt(r["value"] / 1e6)) for r in ROWS
                    if r["peer"] == "binary" and r["metric"].startswith("section|%s|" % build)]
        modules = ["%s %s MB" % (r["metric"].split("|")[2], fmt(r["value"] / 1e6)) for r in ROWS
                   if r["peer"] == "binary" and r["metric"].startswith("module|%s|" % build)]
        out.append("- `credstore`, %s: %s MB as built, %s MB stripped; sections: %s; largest parts (symbol sizes "
                   "by Swift module or C library, `nm -S`): %s." % (
                       "shipped static build" if build == "static" else "plain `swift build -c release` (static since the package links a release credstore statically on Linux)",
                       fmt(size / 1e6), fmt(stripped / 1e6), ", ".join(sections), ", ".join(modules)))
    return out


PEER_ORDER = ["git-credential-store", "secret-tool+gnome-keyring", "pass+gpg",
              "pykeyring+alt-encrypted-cli", "pykeyring+cryptfile-cli",
              "pykeyring+alt-encrypted", "pykeyring+cryptfile"]


def series(sizes, peer_sizes):
    """(label, [(n, ms)], colour, width, dashed) per line of the plot."""
    def pts(peer, metric, scale):
        out = []
        for n in sorted(set([100] + list(sizes) + list(peer_sizes))):
            v = get(peer, n, metric)
            if v is not None:
                out.append((n, v * scale))
        return out
    s = [
        ("credstore defaultCredential(for:), in-process", pts("credstore", "lookup_med_us", 1e-3), "#d62728", 3, False),
        ("C reference lookup, in-process", pts("c-ref", "lookup_med_us", 1e-3), "#444444", 2, True),
        ("credstore get --realm, static, one process", pts("credstore-static", "get_med_ms|get URL --realm R", 1), "#ff7f0e", 3, False),
        ("credstore get --realm, plain release", pts("credstore-plain", "get_med_ms|get URL --realm R", 1), "#ffbb78", 2, False),
        ("credstore git-credential get, static", pts("credstore-static", "get_med_ms|git-credential get (wwwauth[] realm)", 1), "#e377c2", 2, False),
        ("C reference get, one process", pts("c-ref-cli", "get_med_ms|cref get", 1), "#000000", 2, True),
        ("git credential-store get, one process", pts("git-credential-store", "get_med_ms|git credential-store get", 1), "#1f77b4", 2, False),
    ]
    colours = ["#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f"]
    for peer, colour in zip(PEER_ORDER[1:], colours):
        p = pts(peer, "lookup_med_ms", 1)
        if p:
            inproc = not peer.endswith("-cli") and peer.startswith("pykeyring")
            s.append(("%s, %s" % (peer, "in-process" if inproc else "one process"), p, colour, 1.5, False))
    return [x for x in s if x[1]]


def svg_plot(lines, title):
    W, H = 980, 560
    left, right, top, bottom = 80, 370, 50, 60
    pw, ph = W - left - right, H - top - bottom
    xs = [n for _, p, *_ in lines for n, _ in p]
    ys = [v for _, p, *_ in lines for _, v in p]
    x0, x1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if x1 == x0:
        x1 += 1
    if y1 == y0:
        y1 += 1

    def X(n):
        return left + (math.log10(n) - x0) / (x1 - x0) * pw

    def Y(v):
        return top + ph - (math.log10(v) - y0) / (y1 - y0) * ph

    def xlabel(e):
        n = 10 ** e
        return "{:,}".format(n) if n < 1000 else "%dk" % (n // 1000) if n < 10 ** 6 else "%dM" % (n // 10 ** 6)

    def ylabel(e):
        v = 10.0 ** e  # ms
        if v < 1e-3:
            return "%g ns" % (v * 1e6)
        if v < 1:
            return "%g µs" % (v * 1e3)
        if v < 1000:
            return "%g ms" % v
        return "%g s" % (v / 1000)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">' % (W, H, W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (left, esc(title))]
    for e in range(y0, y1 + 1):
        y = Y(10.0 ** e)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>' % (left, y, left + pw, y))
        out.append('<text x="%.1f" y="%.1f" text-anchor="end">%s</text>' % (left - 6, y + 4, esc(ylabel(e))))
        if e < y1:
            for m in range(2, 10):
                ym = Y(m * 10.0 ** e)
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f2f2f2"/>' % (left, ym, left + pw, ym))
    for e in range(x0, x1 + 1):
        x = X(10 ** e)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>' % (x, top, x, top + ph))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>' % (x, top + ph + 18, xlabel(e)))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888888"/>' % (left, top, pw, ph))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">credentials in the store (log scale)</text>'
               % (left + pw / 2, H - 18))
    out.append('<text transform="translate(20,%.1f) rotate(-90)" text-anchor="middle">median latency per lookup '
               '(log scale)</text>' % (top + ph / 2))
    for k, (label, p, colour, width, dashed) in enumerate(lines):
        d = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", X(n), Y(v)) for i, (n, v) in enumerate(p))
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="%s"%s/>' % (d, colour, width, dash))
        for n, v in p:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s at %s: %s</title></circle>'
                       % (X(n), Y(v), colour, esc(label), "{:,}".format(n), esc(fmt(v) + " ms")))
        ly = top + 10 + k * 20
        lx = left + pw + 18
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%s"%s/>'
                   % (lx, ly, lx + 28, ly, colour, width, dash))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 34, ly + 4, esc(label)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def report(a, sizes, peer_sizes, builds, peer_status, versions, started, wall):
    lines = ["_Run of %s, %s; %.0f min of wall time; `Benchmarks/run %s`._"
             % (started, versions, wall / 60, " ".join(a.argv_echo)), ""]
    lines += one_table(sizes, peer_sizes, builds) + [""]
    lines += ["In-process figures from `credstore-bench` (Benchmarks/Harness, a package depending on the `CredentialStore` "
              "product, `swift build -c release`); stores of N permanent credentials in spaces with a realm and a method "
              "(HTTP Basic), plus %d proxy credentials. Lookups: %d rounds per size, each one `credstore-bench lookup` "
              "process (%d random credentials, each call timed alone, after 20 warm-up calls) and one `cref lookup` process "
              "on a C database of the same N, alternating, after both store files were read once into the page cache. Durable writes: %d batches of %d per side, alternating. `get`: "
              "%d processes per form and size (a form that took more than %d s in total stopped early), every form, "
              "`cref get` and `git credential-store get` one after the other for each credential, timed from spawn to "
              "exit; peak RSS: the largest of %d more runs through Benchmarks/maxrss.c. Spawning /bin/true from the "
              "harness: %s ms." % (PROXIES, a.lookup_rounds, max(50, a.lookups // a.lookup_rounds), a.durable_rounds,
                                   a.durable_count, a.get_runs, a.form_seconds, a.rss_runs,
                                   fmt(get("harness", 0, "spawn_true_med_ms"))), ""]
    lines += binary_lines(builds) + [""]
    lines += ["Peers: " + "; ".join("%s: %s" % s for s in peer_status) + ". How each peer is driven, and "
              "which sizes are fast-filled or not run: `Benchmarks/peers/README.md`.", ""]
    return "\n".join(lines)


def versions_line():
    def first(argv):
        try:
            return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode().strip().splitlines()[0]
        except Exception:
            return "?"
    commit = first(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           stdout=subprocess.PIPE).stdout.strip()
    swift = first(["swift", "--version"])
    swift = swift[swift.find("Swift version"):].split(" (")[0].replace("Swift version ", "Swift ")
    sqlite = first(["sh", "-c", "pkg-config --modversion sqlite3"])
    return "commit %s%s, %d cores, %s, gcc %s, SQLite %s" % (commit, " + uncommitted changes" if dirty else "",
                                                            os.cpu_count(), swift, first(["gcc", "-dumpversion"]), sqlite)


def main():
    global LOG
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--harness", required=True, help="the credstore-bench executable (Benchmarks/Harness)")
    ap.add_argument("--credstore-static", required=True, help="credstore as shipped (static release build)")
    ap.add_argument("--credstore-plain", default=None, help="credstore as `swift build -c release` builds it")
    ap.add_argument("--out", default=os.path.join(REPO, "bench-out"))
    ap.add_argument("--work", default=None, help="cached stores (default OUT/stores; reused across runs)")
    ap.add_argument("--sizes", default="1000,10000,100000,1000000", help="store sizes (default 1000,10000,100000,1000000)")
    ap.add_argument("--import-sizes", default=None,
                    help="sizes of the export/import figure (default: those of --sizes from 100,000 up, else the largest)")
    ap.add_argument("--peer-sizes", default="100,1000,10000")
    ap.add_argument("--lookups", type=int, default=2000, help="lookups per size, over the rounds")
    ap.add_argument("--lookup-rounds", type=int, default=5, help="alternating rounds of credstore and C lookup processes")
    ap.add_argument("--get-runs", type=int, default=30, help="processes per form of get and size")
    ap.add_argument("--form-seconds", type=int, default=20, help="a get form stops after this many seconds per size")
    ap.add_argument("--rss-runs", type=int, default=5, help="get processes per form and size measured for peak RSS")
    ap.add_argument("--open-count", type=int, default=100, help="opens per kind and size (at most)")
    ap.add_argument("--open-seconds", type=int, default=10, help="opens of one kind stop after this many seconds")
    ap.add_argument("--verify-count", type=int, default=10)
    ap.add_argument("--durable-rounds", type=int, default=9, help="alternating batches of credstore sets and C inserts")
    ap.add_argument("--durable-count", type=int, default=40, help="durable writes per side per batch")
    ap.add_argument("--import-repeats", type=int, default=3, help="below 1,000,000; one import at 1,000,000")
    ap.add_argument("--peers", choices=["all", "fast", "none"], default="all",
                    help="fast: git, secret-tool, pass (not the Python keyrings, about 3.5 min)")
    ap.add_argument("--peer-timeout", type=int, default=900)
    ap.add_argument("--peers-dir", default=os.environ.get("CREDSTORE_PEERS_DIR", os.path.join(HERE, "peers")),
                    help="the peer drivers bench_*.py (default Benchmarks/peers, or $CREDSTORE_PEERS_DIR)")
    ap.add_argument("--quick", action="store_true",
                    help="defaults for a shorter run: --lookups 900 --lookup-rounds 3 --get-runs 12 --form-seconds 8 "
                         "--rss-runs 3 --open-count 30 --open-seconds 4 --verify-count 3 --durable-rounds 5 "
                         "--durable-count 20 --import-repeats 1 --peers fast")
    ap.add_argument("--no-docs", action="store_true", help="leave docs/ alone")
    if "--quick" in sys.argv[1:]:
        ap.set_defaults(lookups=900, lookup_rounds=3, get_runs=12, form_seconds=8, rss_runs=3, open_count=30,
                        open_seconds=4, verify_count=3, durable_rounds=5, durable_count=20, import_repeats=1, peers="fast")
    a = ap.parse_args()
    a.argv_echo = []
    skip = False
    for x in sys.argv[1:]:
        if skip:
            skip = False
            continue
        if x in ("--harness", "--credstore-static", "--credstore-plain"):
            skip = True
            continue
        if x.split("=")[0] in ("--harness", "--credstore-static", "--credstore-plain"):
            continue
        a.argv_echo.append(x)
    sizes = sorted(int(x) for x in a.sizes.split(",") if x)
    if a.import_sizes is not None:
        import_sizes = sorted(int(x) for x in a.import_sizes.split(",") if x)
    else:
        import_sizes = [n for n in sizes if n >= 100000] or [max(sizes)]
    peer_sizes = [int(x) for x in a.peer_sizes.split(",") if x]
    os.makedirs(a.out, exist_ok=True)
    work = os.path.abspath(a.work or os.path.join(a.out, "stores"))
    os.makedirs(work, exist_ok=True)
    LOG = open(os.path.join(a.out, "run.log"), "w")
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.time()
    versions = versions_line()
    log("credstore side-by-side run, %s, %s" % (started, versions))
    bench = os.path.abspath(a.harness)
    builds = [("static", os.path.abspath(a.credstore_static))]
    if a.credstore_plain:
        builds.append(("plain", os.path.abspath(a.credstore_plain)))
    for exe in [bench] + [b for _, b in builds]:
        if not os.access(exe, os.X_OK):
            raise SystemExit("%s is missing; build it first (Benchmarks/run does)" % exe)
    cref, nosync, maxrss = build_helpers(a.out)

    steps = []

    def step(name, fn):
        t = time.time()
        try:
            fn()
            st = "ok"
        except Exception as e:  # report and go on: one failing part should not lose the others
            st = "FAILED: %s" % e
        steps.append((name, time.time() - t, st))
        log("=== %s: %s (%.0f s)" % (name, st, time.time() - t))

    step("filling the stores (cached in %s)" % work, lambda: fill_stores(bench, cref, nosync, work, sizes, import_sizes))
    step("lookups, alternating with C", lambda: measure_lookups(bench, cref, work, sizes, a))
    step("durable writes, alternating with C", lambda: measure_durable(bench, cref, work, sizes, a))
    step("open and verify", lambda: measure_open_verify(bench, work, sizes, a))
    step("export and import", lambda: measure_imports(bench, work, import_sizes, a))
    step("get, one process per lookup", lambda: measure_get(cref, builds, maxrss, work, sizes, a))
    step("binary sizes", lambda: measure_binaries(builds))
    peer_status = []
    step("peers", lambda: peer_status.extend(measure_peers(a.peers_dir, a.out, a.peers, peer_sizes, a.peer_timeout)))

    with open(os.path.join(a.out, "results.jsonl"), "w") as f:
        for row in ROWS:
            f.write(json.dumps(row) + "\n")
    wall = time.time() - t0
    md = report(a, sizes, peer_sizes, builds, peer_status, versions, started, wall)
    md += "\nSteps: " + "; ".join("%s %.0f s %s" % s for s in steps) + ".\n"
    svg = svg_plot(series(sizes, peer_sizes), "Median lookup latency against store size (%s)" % started)
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(md)
    with open(os.path.join(a.out, "performance.svg"), "w") as f:
        f.write(svg)
    log("\nwrote %s/results.md, results.jsonl, performance.svg" % a.out)
    if not a.no_docs:
        docs = os.path.join(REPO, "docs")
        with open(os.path.join(docs, "performance.svg"), "w") as f:
            f.write(svg)
        page = os.path.join(docs, "performance.md")
        text = open(page).read() if os.path.exists(page) else "# Performance\n\n%s\n%s\n" % (BEGIN, END)
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            _, tail = rest.split(END, 1)
            text = head + BEGIN + "\n" + md + END + tail
        else:
            text += "\n" + BEGIN + "\n" + md + END + "\n"
        with open(page, "w") as f:
            f.write(text)
        log("updated docs/performance.md (between the GENERATED markers) and docs/performance.svg")
    log("")
    log(md)


if __name__ == "__main__":
    main()
