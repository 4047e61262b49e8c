#!/usr/bin/env python3
"""credstore beside the C reference and the peer credential stores, in one run.

Normally started by Benchmarks/run, which builds the release binaries first. Writes into --out
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


def run_rows(argv, env=None, keep=None, drop_note=None):
    """Runs a tool that prints JSON rows; records them (those whose metric passes keep)."""
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
        add(row["peer"], row["n"], row["metric"], row["value"], row["unit"], row.get("samples", 1),
            row.get("note", "") or (drop_note or ""))


def timed_process(argv, expect=None):
    """Wall time of one process, timed from this harness around subprocess.run (spawn to reaped),
    as the peer scripts time theirs."""
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if p.returncode != 0 or (expect is not None and expect not in p.stdout.decode(errors="replace")):
        raise RuntimeError("%s: rc=%d out=%r err=%r" % (" ".join(argv), p.returncode, p.stdout[-200:], p.stderr[-300:]))
    return elapsed


def peak_rss(maxrss, argv, expect=None):
    """Peak RSS in kB of one process, through the maxrss helper (see Benchmarks/maxrss.c)."""
    p = subprocess.run([maxrss] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace").strip().splitlines()
    if p.returncode != 0 or not err or not err[-1].startswith("maxrss_kb ") or (
            expect is not None and expect not in p.stdout.decode(errors="replace")):
        raise RuntimeError("maxrss %s: rc=%d err=%r" % (" ".join(argv), p.returncode, err[-3:]))
    return int(err[-1].split()[1])


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


def measure_c_inprocess(cref, sizes, lookups, repeats, nosync):
    """cref bench at each size. Its durable-insert figures are kept at 1,000 only: at larger N it
    makes N fsync'd inserts per repeat (minutes), so there it runs with the no-sync shim and only
    its lookup figures (reads, which the shim does not touch) are kept."""
    for n in sizes:
        tmp = tempfile.mkdtemp(prefix="credstore-bench-cref.")
        try:
            shim = n > 1000
            env = dict(os.environ, LD_PRELOAD=nosync) if shim else None
            per = max(1, lookups // repeats)

            def keep(row):
                return not (shim and row["metric"].startswith("insert_each"))
            run_rows([cref, "bench", tmp, str(n), str(per), str(repeats)], env=env, keep=keep,
                     drop_note="in-process, %d repeats" % repeats)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def measure_ours_inprocess(bench, work, sizes, a, nosync):
    biggest = max(sizes)
    log("filling the cached stores in %s (setup, syncs off; skipped when already filled)" % work)
    env = dict(os.environ, LD_PRELOAD=nosync)
    for n in sizes:
        run_rows([bench, "fill", work, str(n)], env=env, keep=lambda r: r["metric"] != "peak_rss_kb")
    run_rows([bench, "fill", work, str(biggest), "synchronizable"], env=env,
             keep=lambda r: False)
    log("in-process lookups, one process per size")
    for n in sizes:
        run_rows([bench, "lookup", work, str(n), str(a.lookups)])
    log("durable sets")
    run_rows([bench, "set", work, "0", str(a.set_count)])
    run_rows([bench, "set", work, str(biggest), str(max(20, a.set_count // 2))])
    log("opening the key-file store")
    run_rows([bench, "open", work, str(biggest), str(a.open_count)])
    log("import of a %s-item recipient bundle" % sizes_label(biggest))
    run_rows([bench, "import", work, str(biggest), str(a.import_repeats)])


def measure_durable_pairs(cref, bench, rounds, count):
    """Durable writes, credstore's `set` and C's synchronous=FULL insert, in alternating rounds of
    `count` each into fresh stores: an fsync's cost on a shared disk drifts by 2x within minutes,
    so only writes measured side by side compare. Keeps the per-round ratio's median."""
    ours, theirs, ratios = [], [], []
    for _ in range(rounds):
        tmp = tempfile.mkdtemp(prefix="credstore-bench-durable.")
        try:
            p = subprocess.run([bench, "set", tmp, "0", str(count)], stdout=subprocess.PIPE, check=True)
            o = next(json.loads(l)["value"] for l in p.stdout.decode().splitlines() if '"set_mean_us"' in l)
            p = subprocess.run([cref, "bench", tmp, str(count), str(count), "1"], stdout=subprocess.PIPE, check=True)
            c = next(json.loads(l)["value"] for l in p.stdout.decode().splitlines() if '"insert_each_txn_full_per_op_us"' in l)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        ours.append(o)
        theirs.append(c)
        ratios.append(o / c)
    note = "%d alternating rounds of %d durable writes into a fresh store; median of rounds" % (rounds, count)
    add("credstore", 0, "set_paired_mean_us", med(ours), "us", rounds, note)
    add("c-ref", 0, "insert_paired_full_per_op_us", med(theirs), "us", rounds, note)
    add("credstore", 0, "set_over_c_paired_ratio", med(ratios), "x", rounds, note + " (median of per-round ratios)")


def measure_get(cref, credstore, maxrss, work, sizes, runs, rss_runs):
    """One process per lookup, credstore's and C's interleaved so that both see the same noise.
    Wall times from `runs` plain runs; peak RSS from `rss_runs` further runs under the helper."""
    tmp = tempfile.mkdtemp(prefix="credstore-bench-cli.")
    try:
        for n in [100] + list(sizes):
            cdb = os.path.join(tmp, "c-%d.db" % n)
            subprocess.run([cref, "fill", cdb, str(n)], check=True)
            ours_db = os.path.join(work, "perm-%d" % n, "credentials.db") if n in sizes else None
            c_t, c_rss, o_t, o_rss = [], [], [], []
            for k, i in enumerate(picks(n, runs + 3)):
                c_argv = [cref, "get", cdb, str(i)]
                o_argv = [credstore, "get", "https://h%d.example.com" % i, "--realm", "realm%d" % (i % 10),
                          "--store", ours_db] if ours_db else None
                t = timed_process(c_argv, expect=password(i))
                if k >= 3:  # the first few warm the page cache and the binaries
                    c_t.append(t)
                if o_argv:
                    t = timed_process(o_argv, expect=password(i))
                    if k >= 3:
                        o_t.append(t)
                if k < rss_runs:
                    c_rss.append(peak_rss(maxrss, c_argv, expect=password(i)))
                    if o_argv:
                        o_rss.append(peak_rss(maxrss, o_argv, expect=password(i)))
            if n == 100:
                # Invocation floors: a get that finds no store (credstore) or no key (C, empty store).
                empty = os.path.join(tmp, "empty.db")
                subprocess.run([cref, "fill", empty, "0"], check=True)
                missing = os.path.join(tmp, "missing", "credentials.db")
                cf, of = [], []
                for _ in range(runs):
                    t = time.perf_counter()
                    subprocess.run([cref, "get", empty, "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    cf.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    subprocess.run([credstore, "get", "https://h5.example.com", "--store", missing],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    of.append(time.perf_counter() - t)
                spawn = []
                for _ in range(runs):
                    t = time.perf_counter()
                    subprocess.run(["true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    spawn.append(time.perf_counter() - t)
                add("c-ref-cli", 0, "invocation_floor_med_ms", med(cf) * 1e3, "ms", runs, "cref get of a missing key, empty store")
                add("credstore-cli", 0, "invocation_floor_med_ms", med(of) * 1e3, "ms", runs,
                    "credstore get with no store at --store (exit 69 path: start-up, parse, stat)")
                add("harness", 0, "spawn_true_med_ms", med(spawn) * 1e3, "ms", runs, "spawn /bin/true from this harness")
            for peer, ts, rs, note in (("c-ref-cli", c_t, c_rss, "cref get, one process per lookup"),
                                       ("credstore-cli", o_t, o_rss, "credstore get, one process per lookup")):
                if not ts:
                    continue
                add(peer, n, "lookup_med_ms", med(ts) * 1e3, "ms", len(ts), note)
                add(peer, n, "lookup_p99_ms", p99(ts) * 1e3, "ms", len(ts), note)
                add(peer, n, "peak_rss_med_kb", med(rs), "kB", len(rs), note + ", peak RSS")
                add(peer, n, "peak_rss_max_kb", max(rs), "kB", len(rs), note + ", peak RSS")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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


def budget_table(sizes):
    small, big = min(sizes), max(sizes)
    lines = ["| measure | credstore | C reference | ×C | budget (docs/contract.md) | met |",
             "|---|---:|---:|---:|---|:---:|"]

    def row(measure, ours, c, unit, budget, ok):
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            measure, fmt(ours) + (" " + unit if ours is not None else ""),
            fmt(c) + (" " + unit if c is not None else ""), ratio(ours, c) if c is not None else "–",
            budget, "–" if ok is None else ("yes" if ok else "**no**")))

    o, c = get("credstore", big, "lookup_med_us"), get("c-ref", big, "lookup_med_us")
    row("`defaultCredential(for:)` at %s, median" % sizes_label(big), o, c, "µs", "≤ 2× C",
        None if o is None or c is None else o <= 2 * c)
    o1, c1 = get("credstore", small, "lookup_med_us"), get("c-ref", small, "lookup_med_us")
    if None not in (o, c, o1, c1):
        go, gc = o / o1, c / c1
        lines.append("| lookup growth %s → %s | %s× | %s× | %s | ≤ 1.2× C's growth | %s |" % (
            sizes_label(small), sizes_label(big), fmt(go, 2), fmt(gc, 2), ratio(go, gc),
            "yes" if go <= 1.2 * gc else "**no**"))
    o, c = get("credstore", 0, "set_paired_mean_us"), get("c-ref", 0, "insert_paired_full_per_op_us")
    r = get("credstore", 0, "set_over_c_paired_ratio")
    if None not in (o, c, r):
        lines.append("| durable `set`, mean per write, fresh store, %d rounds alternating with C's synchronous=FULL insert (medians) | %s µs | %s µs | %s× (median of rounds) | ≤ 2× C | %s |" % (
            get_samples("credstore", 0, "set_over_c_paired_ratio") or 0, fmt(o), fmt(c), fmt(r, 2),
            "yes" if r <= 2 else "**no**"))
    o = get("credstore", big, "import_s")
    row("import of a %s-item bundle (recipient)" % sizes_label(big), o, None, "s", "≤ 5 s",
        None if o is None else o <= 5)
    o, c = get("credstore-cli", big, "lookup_med_ms"), get("c-ref-cli", big, "lookup_med_ms")
    row("`credstore get` process at %s, median wall" % sizes_label(big), o, c, "ms", "≤ 2× C",
        None if o is None or c is None else o <= 2 * c)
    o, c = mb(get("credstore-cli", big, "peak_rss_max_kb")), mb(get("c-ref-cli", big, "peak_rss_max_kb"))
    row("`credstore get` at %s, peak RSS (max of runs)" % sizes_label(big), o, c, "MB", "≤ 30 MB",
        None if o is None else o <= 30)
    o = get("credstore", big, "open_med_ms")
    row("open a key-file store, median (table seal checked over every row)", o, None, "ms", "≤ 5 ms",
        None if o is None else o <= 5)
    o = get("credstore", big, "open_rows_only_med_ms")
    row("open a key-file store as `credstore get` does (seal MAC and anchor only), median", o, None, "ms", "≤ 5 ms",
        None if o is None else o <= 5)
    return lines


def get_samples(peer, n, metric):
    for row in reversed(ROWS):
        if row["peer"] == peer and row["n"] == n and row["metric"] == metric:
            return row["samples"]
    return None


def size_table(sizes):
    lines = ["| N | `defaultCredential(for:)` median (p99) µs | `credentials(for:)` median µs | C lookup median (p99) µs | lookup ×C "
             "| `credstore get` median (p99) ms | C `cref get` median (p99) ms | get ×C | get peak RSS MB (C) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in sizes:
        o, op = get("credstore", n, "lookup_med_us"), get("credstore", n, "lookup_p99_us")
        l = get("credstore", n, "credentials_med_us")
        c, cp = get("c-ref", n, "lookup_med_us"), get("c-ref", n, "lookup_p99_us")
        g, gp = get("credstore-cli", n, "lookup_med_ms"), get("credstore-cli", n, "lookup_p99_ms")
        cg, cgp = get("c-ref-cli", n, "lookup_med_ms"), get("c-ref-cli", n, "lookup_p99_ms")
        r, cr = mb(get("credstore-cli", n, "peak_rss_max_kb")), mb(get("c-ref-cli", n, "peak_rss_max_kb"))
        lines.append("| %s | %s (%s) | %s | %s (%s) | %s | %s (%s) | %s (%s) | %s | %s (%s) |" % (
            sizes_label(n), fmt(o), fmt(op), fmt(l), fmt(c), fmt(cp), ratio(o, c), fmt(g), fmt(gp),
            fmt(cg), fmt(cgp), ratio(g, cg), fmt(r), fmt(cr)))
    return lines


def other_table(sizes):
    big = max(sizes)
    lines = ["| measure | median | p99 / other | samples |", "|---|---:|---:|---:|"]

    def row(label, metric_med, metric_other, n, unit, peer="credstore"):
        m = get(peer, n, metric_med)
        if m is None:
            return
        other = get(peer, n, metric_other) if metric_other else None
        lines.append("| %s | %s %s | %s | %s |" % (label, fmt(m), unit,
                                                   (fmt(other) + " " + unit) if other is not None else "–",
                                                   get_samples(peer, n, metric_med)))
    row("durable `set` into a new store (store 0 → COUNT)", "set_med_us", "set_p99_us", 0, "µs")
    row("durable `set` into the %s store" % sizes_label(big), "set_med_us", "set_p99_us", big, "µs")
    row("C reference: synchronous=FULL insert, mean over 0 → 1,000", "insert_each_txn_full_per_op_us", None,
        1000, "µs", peer="c-ref")
    row("open the %s key-file store (p99 column: first open)" % sizes_label(big), "open_med_ms",
        "open_first_ms", big, "ms")
    row("open the %s key-file store with integrityCheck .rowsOnly" % sizes_label(big), "open_rows_only_med_ms",
        None, big, "ms")
    row("`credstore get` floor: no store at --store (start-up, parse, stat, exit)", "invocation_floor_med_ms", None, 0, "ms",
        peer="credstore-cli")
    row("C `cref get` floor: missing key in an empty store", "invocation_floor_med_ms", None, 0, "ms", peer="c-ref-cli")
    row("spawning /bin/true from the harness", "spawn_true_med_ms", None, 0, "ms", peer="harness")
    row("export %s synchronizable items to a recipient bundle" % sizes_label(big), "export_s", None, big, "s")
    row("import that bundle into an empty store", "import_s", None, big, "s")
    for n in sizes:
        row("fill a %s store, one `set` each (setup, syncs off)" % sizes_label(n), "fill_s", None, n, "s")
    rss = []
    for row_ in ROWS:
        if row_["peer"] == "credstore" and row_["metric"] == "peak_rss_kb":
            mode = row_["note"].replace("credstore-bench ", "").replace(", whole process", "")
            text = "%s N=%s: %s MB" % (mode, sizes_label(row_["n"]), fmt(row_["value"] / 1024))
            anon = [r["value"] for r in ROWS if r["peer"] == "credstore" and r["n"] == row_["n"]
                    and r["metric"] == "rss_anon_end_kb" and r["note"].startswith("credstore-bench %s," % mode)]
            filed = [r["value"] for r in ROWS if r["peer"] == "credstore" and r["n"] == row_["n"]
                     and r["metric"] == "rss_file_end_kb" and r["note"].startswith("credstore-bench %s," % mode)]
            if anon and filed:
                text += " (at exit %s MB anonymous + %s MB file-backed)" % (fmt(anon[-1] / 1024, 2), fmt(filed[-1] / 1024, 2))
            rss.append(text)
    return lines, rss


PEER_ORDER = ["git-credential-store", "secret-tool+gnome-keyring", "pass+gpg",
              "pykeyring+alt-encrypted-cli", "pykeyring+cryptfile-cli",
              "pykeyring+alt-encrypted", "pykeyring+cryptfile"]


def all_stores_table(sizes, peer_sizes):
    ns = sorted(set([100] + list(peer_sizes) + list(sizes)))
    lines = ["| store | kind | " + " | ".join(sizes_label(n) for n in ns) + " |",
             "|---|---|" + "---:|" * len(ns)]

    def line(label, kind, peer, metric, scale, ref_peer, ref_metric, ref_scale):
        cells = []
        for n in ns:
            v = get(peer, n, metric)
            if v is None:
                cells.append("")
                continue
            v *= scale
            ref = get(ref_peer, n, ref_metric)
            ref = ref * ref_scale if ref is not None else None
            shown = v * 1e3 if kind == "in-process" else v
            cells.append(fmt(shown) + (" (%s)" % ratio(v, ref) if ref is not None and peer != ref_peer else ""))
        if any(cells):
            lines.append("| %s | %s | %s |" % (label, kind + (", µs" if kind == "in-process" else ", ms"), " | ".join(cells)))

    line("**credstore** `defaultCredential(for:)`", "in-process", "credstore", "lookup_med_us", 1e-3,
         "c-ref", "lookup_med_us", 1e-3)
    line("C reference", "in-process", "c-ref", "lookup_med_us", 1e-3, "c-ref", "lookup_med_us", 1e-3)
    line("**credstore get**", "process", "credstore-cli", "lookup_med_ms", 1, "c-ref-cli", "lookup_med_ms", 1)
    line("C reference `cref get`", "process", "c-ref-cli", "lookup_med_ms", 1, "c-ref-cli", "lookup_med_ms", 1)
    for peer in PEER_ORDER:
        inproc = not peer.endswith("-cli") and peer.startswith("pykeyring")
        line(peer, "in-process" if inproc else "process", peer, "lookup_med_ms", 1,
             "c-ref" if inproc else "c-ref-cli", "lookup_med_us" if inproc else "lookup_med_ms",
             1e-3 if inproc else 1)
    return lines


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
        ("credstore get, one process", pts("credstore-cli", "lookup_med_ms", 1), "#ff7f0e", 3, False),
        ("C reference get, one process", pts("c-ref-cli", "lookup_med_ms", 1), "#000000", 2, True),
    ]
    colours = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
    for peer, colour in zip(PEER_ORDER, colours):
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


def report(a, sizes, peer_sizes, peer_status, versions, started, wall):
    lines = ["_Run of %s, %s; %.0f min of wall time; `Benchmarks/run %s`._"
             % (started, versions, wall / 60, " ".join(a.argv_echo)), ""]
    lines += ["#### Budgets", ""] + budget_table(sizes) + [""]
    lines += ["#### By store size (credstore and the C reference, same run)", ""] + size_table(sizes) + [""]
    lines += ["Lookups: %d random credentials per size, each timed alone, warm store (the C reference: the same number "
              "over its repeats, each repeat's after 20 untimed ones). `get`: %d processes per size, each timed from spawn to exit by the harness, "
              "credstore's and C's interleaved; peak RSS: the largest of %d more runs per size, through "
              "Benchmarks/maxrss.c (fork, exec, wait4 from a small C parent)." % (a.lookups, a.get_runs, a.rss_runs), ""]
    other, rss = other_table(sizes)
    lines += ["#### Other measurements", ""] + other + [""]
    if rss:
        lines += ["Peak RSS of each `credstore-bench` mode (own process): " + "; ".join(rss) + ".", ""]
    lines += ["#### Every store: median lookup (×C: against the C reference of the same kind at the same N)", ""]
    lines += all_stores_table(sizes, peer_sizes) + [""]
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
    return "commit %s%s, %d cores, %s, gcc %s" % (commit, " + uncommitted changes" if dirty else "",
                                                os.cpu_count(), swift, first(["gcc", "-dumpversion"]))


def main():
    global LOG
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with the release credstore and credstore-bench")
    ap.add_argument("--out", default=os.path.join(REPO, "bench-out"))
    ap.add_argument("--work", default=None, help="cached stores (default OUT/stores; reused across runs)")
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--peer-sizes", default="100,1000,10000")
    ap.add_argument("--lookups", type=int, default=2000)
    ap.add_argument("--get-runs", type=int, default=40)
    ap.add_argument("--rss-runs", type=int, default=10, help="get processes per size measured for peak RSS")
    ap.add_argument("--set-count", type=int, default=1000)
    ap.add_argument("--open-count", type=int, default=200)
    ap.add_argument("--durable-rounds", type=int, default=9, help="alternating rounds of credstore sets and C inserts")
    ap.add_argument("--durable-count", type=int, default=300, help="durable writes per side per round")
    ap.add_argument("--import-repeats", type=int, default=3)
    ap.add_argument("--cref-repeats", type=int, default=5)
    ap.add_argument("--peers", choices=["all", "fast", "none"], default="all",
                    help="fast: git, secret-tool, pass (not the Python keyrings, about 3.5 min)")
    ap.add_argument("--peer-timeout", type=int, default=900)
    ap.add_argument("--peers-dir", default=os.environ.get("CREDSTORE_PEERS_DIR", os.path.join(HERE, "peers")),
                    help="the peer drivers bench_*.py (default Benchmarks/peers, or $CREDSTORE_PEERS_DIR)")
    ap.add_argument("--quick", action="store_true",
                    help="defaults for a shorter run: --lookups 500 --get-runs 20 --set-count 300 --open-count 50 "
                         "--import-repeats 1 --cref-repeats 3 --durable-rounds 5 --durable-count 200 --peers fast")
    ap.add_argument("--no-docs", action="store_true", help="leave docs/ alone")
    if "--quick" in sys.argv[1:]:
        ap.set_defaults(lookups=500, get_runs=20, set_count=300, open_count=50, import_repeats=1,
                        cref_repeats=3, durable_rounds=5, durable_count=200, peers="fast")
    a = ap.parse_args()
    a.argv_echo = sys.argv[1:]
    a.argv_echo = [x for i, x in enumerate(a.argv_echo) if x != "--bin" and (i == 0 or a.argv_echo[i - 1] != "--bin")]
    sizes = [int(x) for x in a.sizes.split(",") if x]
    peer_sizes = [int(x) for x in a.peer_sizes.split(",") if x]
    os.makedirs(a.out, exist_ok=True)
    work = a.work or os.path.join(a.out, "stores")
    os.makedirs(work, exist_ok=True)
    LOG = open(os.path.join(a.out, "run.log"), "w")
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.time()
    versions = versions_line()
    log("credstore side-by-side run, %s, %s" % (started, versions))
    bench = os.path.join(a.bin, "credstore-bench")
    credstore = os.path.join(a.bin, "credstore")
    for exe in (bench, credstore):
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

    step("C reference, in-process", lambda: measure_c_inprocess(cref, sorted(set([100] + sizes)), a.lookups,
                                                                 a.cref_repeats, nosync))
    step("credstore, in-process", lambda: measure_ours_inprocess(bench, work, sizes, a, nosync))
    step("durable writes, alternating with C", lambda: measure_durable_pairs(cref, bench, a.durable_rounds, a.durable_count))
    step("get, one process per lookup", lambda: measure_get(cref, credstore, maxrss, work, sizes, a.get_runs, a.rss_runs))
    peer_status = []
    step("peers", lambda: peer_status.extend(measure_peers(a.peers_dir, a.out, a.peers, peer_sizes, a.peer_timeout)))

    with open(os.path.join(a.out, "results.jsonl"), "w") as f:
        for row in ROWS:
            f.write(json.dumps(row) + "\n")
    wall = time.time() - t0
    md = report(a, sizes, peer_sizes, peer_status, versions, started, wall)
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
