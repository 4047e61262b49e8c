"""What every peer driver shares: the credentials, the rows, the timing, and how a run ends.

A driver measures one credential store at a few sizes and appends its figures to --out as JSON
lines {"peer", "n", "metric", "value", "unit", "samples", "note"}, the rows
Benchmarks/side_by_side.py reads (credstore-bench and the C reference print the same).

How a driver ends, which side_by_side.py reports for it:
  exit 0              measured (sizes it chose to leave out have a "not_run" row saying why)
  exit 69, last line "not run: REASON"
                      the store cannot run here (not installed, daemon would not start, ...);
                      a "not_run" row with the reason is written too
  any other status    failed part-way; the rows written so far stay, the last line says why
"""
import argparse
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
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
NOT_RUN = 69  # sysexits EX_UNAVAILABLE: a program or service the driver needs is not there
SIZES = "100,1000,10000"
LOOKUPS = 200


class NotRun(Exception):
    """The store cannot be measured on this machine; the message says why."""


class Credential:
    """Credential i, the same for every store: https://h<i>.example.com:443, realm realm<i % 10>,
    user user<i>, a 16-byte password, as in credstore-bench and Benchmarks/reference/cref.c."""

    def __init__(self, i):
        self.i = i
        self.host = "h%d.example.com" % i
        self.port = 443
        self.realm = "realm%d" % (i % 10)
        self.user = "user%d" % i
        self.password = "pw%014d" % i

    @property
    def service(self):
        """One string for stores that key an entry by service and user only."""
        return "https://%s:%d/%s" % (self.host, self.port, self.realm)


def median(values):
    return statistics.median(values)


def p99(values):
    """Nearest rank, as side_by_side.py computes it; with under 100 samples, the largest."""
    ordered = sorted(values)
    return ordered[max(1, min(len(ordered), math.ceil(0.99 * len(ordered)))) - 1]


def lookup_sample(n, count, seed=1234):
    """Which credentials to look up in a store of n: random, but the same in every run and for
    every store of that size, so two stores answer the same questions."""
    rng = random.Random(seed + n)
    return [rng.randrange(n) for _ in range(count)]


class Rows:
    """Appends one peer's rows to the results file, and echoes each for the run's log."""

    def __init__(self, peer, path):
        self.peer = peer
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def add(self, n, metric, value, unit, samples=1, note=""):
        row = {"peer": self.peer, "n": n, "metric": metric, "value": value, "unit": unit,
               "samples": samples, "note": note}
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")
        print("  %-26s n=%-6s %-24s %12.4f %-2s (k=%s) %s" % (self.peer, n, metric, value, unit, samples, note),
              flush=True)

    def latencies(self, n, seconds, note="", metric="lookup"):
        """Median and p99 of single operations, in ms."""
        ms = [s * 1e3 for s in seconds]
        self.add(n, metric + "_med_ms", median(ms), "ms", len(ms), note)
        self.add(n, metric + "_p99_ms", p99(ms), "ms", len(ms), note)

    def not_run(self, n, reason):
        self.add(n, "not_run", 0, "", 0, reason)


def timed(argv, stdin=None, env=None, expect=None, check=True):
    """Seconds from spawning argv to reaping it, measured here around subprocess.run: a user's
    command pays for its process too, and side_by_side.py times `credstore get` and `cref get`
    the same way. expect, if given, must appear in the output, so a failed lookup is never
    counted as a fast one."""
    if isinstance(stdin, str):
        stdin = stdin.encode()
    start = time.perf_counter()
    p = subprocess.run(argv, input=stdin, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if check and p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), p.returncode,
                                                p.stderr.decode(errors="replace").strip()[-400:]))
    if expect is not None and expect not in p.stdout.decode(errors="replace"):
        raise RuntimeError("%s: %r not in the output %r" % (" ".join(argv), expect, p.stdout[-200:]))
    return elapsed


def spawn_floor(rows, count=50):
    """What spawning /bin/true costs from this harness: the part of every CLI figure that is
    Python's and the kernel's, not the store's."""
    rows.add(0, "spawn_true_med_ms", median([timed(["true"]) for _ in range(count)]) * 1e3, "ms", count,
             "spawn /bin/true from this harness")


class Fill:
    """Grows a store one credential at a time, as a user's stores grow, across the sizes.

    fill_s at N is the time to insert credentials 0 ..< N from empty (the sum over all the steps
    so far); insert_med_ms is the median of the last `tail` inserts, what one insert costs when
    the store holds about N."""

    def __init__(self, rows, insert, tail=100):
        self.rows, self.insert, self.tail = rows, insert, tail
        self.count, self.total = 0, 0.0

    def to(self, n):
        times = [self.insert(i) for i in range(self.count, n)]
        self.count = n
        self.total += sum(times)
        self.rows.add(n, "fill_s", self.total, "s", n, "one insert at a time from empty")
        last = times[-self.tail:]
        if last:
            self.rows.add(n, "insert_med_ms", median(last) * 1e3, "ms", len(last),
                          "median of the last %d inserts before N" % len(last))


def require(*programs):
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        raise NotRun("%s not installed (bash Benchmarks/peers/setup.sh)" % ", ".join(missing))


def arguments(doc):
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "out", "results.jsonl"),
                    help="JSON-lines file the rows are appended to")
    ap.add_argument("--sizes", default=SIZES, help="store sizes, comma-separated, ascending (default %s)" % SIZES)
    ap.add_argument("--lookups", type=int, default=LOOKUPS, help="timed lookups per size (default %d)" % LOOKUPS)
    return ap


def sizes(text):
    return sorted(int(x) for x in text.split(",") if x)


def scratch(name):
    """A private folder for the store, HOME, GNUPGHOME and the like; removed by the caller."""
    return tempfile.mkdtemp(prefix="credstore-peer-%s." % name)


def main(peer, parse, measure):
    """Runs measure(args, rows) and ends the process as the module docstring says."""
    args = parse()
    rows = Rows(peer, args.out)
    try:
        measure(args, rows)
    except NotRun as reason:
        rows.not_run(0, str(reason))
        print("not run: %s" % reason, flush=True)
        sys.exit(NOT_RUN)
    except Exception as error:  # noqa: BLE001 - any failure ends the run with its reason last
        traceback.print_exc(file=sys.stdout)
        message = str(error).strip().splitlines()
        print("failed: %s" % (message[0] if message else type(error).__name__), flush=True)
        sys.exit(1)
