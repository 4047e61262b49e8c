#!/usr/bin/env python3
"""Python's keyring with an encrypted-file backend, stock settings, in-process and as a command.

  --backend cryptfile   keyrings.cryptfile CryptFileKeyring (Argon2id per entry)
  --backend alt         keyrings.alt EncryptedKeyring (PBKDF2 per entry)

In-process (peer pykeyring+NAME): set_password / get_password on one unlocked backend object,
each call timed alone. As a command (peer pykeyring+NAME-cli): one `python -m keyring -p
Benchmarks/peers -b keyring_backends.CLASS get|set SERVICE USER` process per operation, which
starts the interpreter, imports, unlocks (one key derivation for the password reference) and
then does the operation; keyring_backends.py gives it the file and master password.

Both backends keep every entry in one INI file, parsed on every get and parsed and rewritten on
every set, with a key derivation per entry on top; filling them one set at a time is O(N^2) and
slow. Fast fill: sizes above --max-fill are written in one go in the backend's own format. The
entries that will be looked up are encrypted for real; every other one is a copy of one real
ciphertext (same size and format). At those sizes insert_med_ms comes from --marginal real sets.
"""
import configparser
import os
import shutil
import sys
import time
from base64 import encodebytes

import peerbench as pb

# What a run can afford per backend on 2 cores: cryptfile spends ~0.4 s of Argon2id per get or
# set, so it is filled for real to 100 only, with fewer lookups; alt's PBKDF2 is cheap, its INI
# file is what grows. fast_lookups caps the lookups at fast-filled sizes (each parses a file of
# megabytes).
SETTINGS = {
    "cryptfile": dict(max_fill=100, lookups=30, fast_lookups=30, marginal=3, cli_sizes="100", cli_gets=5, cli_sets=3),
    "alt": dict(max_fill=1000, lookups=200, fast_lookups=30, marginal=5, cli_sizes="100,1000,10000",
                cli_gets=10, cli_sets=5),
}
FIRST_EXTRA = 2_000_000  # credentials set beyond 0 ..< N, for timed inserts that must not replace


def parse():
    ap = pb.arguments(__doc__)
    ap.add_argument("--backend", choices=sorted(SETTINGS), required=True)
    ap.add_argument("--max-fill", type=int, help="largest size filled one set at a time")
    ap.add_argument("--marginal", type=int, help="real sets timed at a fast-filled size")
    ap.add_argument("--cli-sizes", help="sizes at which the command line is timed too")
    ap.add_argument("--cli-gets", type=int, help="get processes per size")
    ap.add_argument("--cli-sets", type=int, help="set processes per size")
    ap.set_defaults(lookups=None)
    args = ap.parse_args()
    for name, value in SETTINGS[args.backend].items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    return args


def load(backend):
    """The backend class and its INI-key escaping, or NotRun if the packages are missing."""
    try:
        import keyring_backends
        if backend == "cryptfile":
            from keyrings.cryptfile.escape import escape
            return keyring_backends.CryptFile, escape
        from keyrings.alt.escape import escape
        return keyring_backends.AltEncrypted, escape
    except ImportError as error:
        raise pb.NotRun("%s (bash Benchmarks/peers/setup.sh)" % error)


def measure(args, rows):
    sys.path.insert(0, pb.HERE)
    cls, escape = load(args.backend)
    cli_rows = pb.Rows(rows.peer + "-cli", args.out)
    home = pb.scratch("pykeyring")
    path = os.path.join(home, "keyring.cfg")
    os.environ.update(CREDSTORE_PEER_KEYRING_FILE=path, CREDSTORE_PEER_KEYRING_PASSWORD="peer-benchmark-master")
    try:
        keyring = cls()
        start = time.perf_counter()
        keyring.keyring_key  # creates the file and its password reference
        rows.add(0, "create_store_s", time.perf_counter() - start, "s", 1, keyring.scheme)
        cli = [sys.executable, "-m", "keyring", "-p", pb.HERE, "-b", "keyring_backends." + cls.__name__]
        floor = [pb.timed([sys.executable, "-c", "import keyring.cli, keyring_backends"],
                          env=dict(os.environ, PYTHONPATH=pb.HERE)) for _ in range(10)]
        cli_rows.add(0, "import_floor_med_ms", pb.median(floor) * 1e3, "ms", len(floor),
                     "interpreter start and imports, no keyring operation")

        own = set()  # credentials whose stored ciphertext is their own, not a fast-fill copy

        def insert(i):
            c = pb.Credential(i)
            start = time.perf_counter()
            keyring.set_password(c.service, c.user, c.password)
            elapsed = time.perf_counter() - start
            own.add(i)
            return elapsed

        def fast_fill(start, n, looked_up):
            ini = configparser.RawConfigParser()
            ini.read(path)
            copy = None
            for i in list(range(start, n)) + sorted(i for i in looked_up if i < start and i not in own):
                c = pb.Credential(i)
                if copy is None or i in looked_up:
                    sealed = keyring.encrypt(c.password.encode(), keyring._generate_assoc(c.service, c.user))
                    value = "\n" + encodebytes(sealed).decode()
                    own.add(i)
                    copy = copy or value
                else:
                    value = copy
                section = escape(c.service)
                if not ini.has_section(section):
                    ini.add_section(section)
                ini.set(section, escape(c.user), value)
            with open(path, "w") as f:
                ini.write(f)

        fill = pb.Fill(rows, insert)
        extra = FIRST_EXTRA
        cli_sizes = set(pb.sizes(args.cli_sizes))
        for n in pb.sizes(args.sizes):
            real = n <= args.max_fill
            picked = pb.lookup_sample(n, args.lookups if real else min(args.lookups, args.fast_lookups))
            if real:
                fill.to(n)
                note = "in-process"
            else:
                fast_fill(fill.count, n, set(picked))
                fill.count = n
                note = "in-process; fast-filled past %d" % args.max_fill
            times = []
            for c in map(pb.Credential, picked):
                start = time.perf_counter()
                found = keyring.get_password(c.service, c.user)
                times.append(time.perf_counter() - start)
                if found != c.password:
                    raise RuntimeError("get_password(%s, %s) returned %r" % (c.service, c.user, found))
            rows.latencies(n, times, note)
            rows.add(n, "file_bytes", os.path.getsize(path), "B")
            if not real:
                timed = [insert(i) for i in range(extra, extra + args.marginal)]
                extra += args.marginal
                rows.add(n, "insert_med_ms", pb.median(timed) * 1e3, "ms", len(timed),
                         "median of %d real sets into the fast-filled store" % len(timed))
            if n in cli_sizes:
                gets, sets = (args.cli_gets, args.cli_sets) if real else (max(3, args.cli_gets // 2),
                                                                          max(2, args.cli_sets // 2))
                cli_rows.latencies(n, [pb.timed(cli + ["get", c.service, c.user], expect=c.password)
                                       for c in map(pb.Credential, picked[:gets])], "one process per get")
                timed = []
                for c in map(pb.Credential, range(extra, extra + sets)):
                    timed.append(pb.timed(cli + ["set", c.service, c.user], c.password + "\n"))
                extra += sets
                cli_rows.add(n, "insert_med_ms", pb.median(timed) * 1e3, "ms", len(timed), "one process per set")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    arguments = parse()
    pb.main("pykeyring+" + ("cryptfile" if arguments.backend == "cryptfile" else "alt-encrypted"),
            lambda: arguments, measure)
