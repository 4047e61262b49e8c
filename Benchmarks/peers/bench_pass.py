#!/usr/bin/env python3
"""pass, the standard Unix password manager: one GnuPG-encrypted file per entry.

A throwaway GnuPG home in a scratch folder, with a key that has no passphrase (gpg's default
algorithm: RSA-3072 on gpg 2.2), so no pinentry is needed; gpg-agent is stopped at the end. One
`pass insert --multiline --force HOST:PORT/USER` (password on stdin) or `pass show HOST:PORT/USER`
process per operation.

Fast fill: a real insert costs a bash script and a gpg run, 25-40 ms, so sizes above --max-fill
(default 1,000) are not filled one at a time. The entries that will be looked up at that size,
and --marginal more whose inserts are timed, are inserted for real; every other new entry is a
copy of one real entry's .gpg file under its own name. pass keeps no index, so the store has the
same files, sizes and folders as a real one, and each lookup still decrypts its own password.
"""
import os
import shutil
import subprocess

import peerbench as pb

PEER = "pass+gpg"


def entry(c):
    return "%s:%d/%s" % (c.host, c.port, c.user)


def make_key(env):
    """A key without a passphrase, and its fingerprint; NotRun if gpg cannot make one here."""
    made = subprocess.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
                           "--quick-generate-key", "credstore peer benchmark <bench@example.invalid>",
                           "default", "default", "never"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if made.returncode != 0:
        raise pb.NotRun("gpg could not make a key: %s" % made.stderr.decode(errors="replace").strip()[-200:])
    listed = subprocess.run(["gpg", "--list-keys", "--with-colons"], env=env, check=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    fields = [line.split(":") for line in listed.splitlines()]
    fingerprint = next(f[9] for f in fields if f[0] == "fpr")
    subkey = next(f for f in fields if f[0] == "sub")
    return fingerprint, "encryption subkey: algorithm %s, %s bits" % (subkey[3], subkey[2])


def measure(args, rows):
    pb.require("pass", "gpg", "gpgconf")
    home = pb.scratch("pass")
    gnupg = os.path.join(home, "gnupg")
    store = os.path.join(home, "password-store")
    os.makedirs(gnupg, mode=0o700)
    env = dict(os.environ, HOME=home, GNUPGHOME=gnupg, PASSWORD_STORE_DIR=store)
    env.pop("GPG_AGENT_INFO", None)
    env.pop("PASSWORD_STORE_KEY", None)
    try:
        fingerprint, key = make_key(env)
        subprocess.run(["pass", "init", fingerprint], env=env, check=True, stdout=subprocess.DEVNULL)
        pb.spawn_floor(rows)
        floor = [pb.timed(["pass", "show", "not/there"], env=env, check=False) for _ in range(30)]
        rows.add(0, "invocation_floor_med_ms", pb.median(floor) * 1e3, "ms", len(floor),
                 "show of an entry that is not there (no gpg run); " + key)

        def insert(i):
            c = pb.Credential(i)
            return pb.timed(["pass", "insert", "--multiline", "--force", entry(c)], c.password + "\n", env)

        fill = pb.Fill(rows, insert)
        for n in pb.sizes(args.sizes):
            picked = pb.lookup_sample(n, args.lookups)
            note = ""
            if n <= args.max_fill:
                fill.to(n)
            else:
                note = "fast-filled past %d: entries not looked up are copies of one real entry's file" % args.max_fill
                real = sorted(set(i for i in picked if i >= fill.count))
                template = os.path.join(store, entry(pb.Credential(0)) + ".gpg")
                for i in set(range(fill.count, n - args.marginal)) - set(real):
                    copy = os.path.join(store, entry(pb.Credential(i)) + ".gpg")
                    os.makedirs(os.path.dirname(copy), exist_ok=True)
                    shutil.copyfile(template, copy)
                for i in real:
                    if i < n - args.marginal:
                        insert(i)
                timed = [insert(i) for i in range(n - args.marginal, n)]
                fill.count = n
                rows.add(n, "insert_med_ms", pb.median(timed) * 1e3, "ms", len(timed),
                         "median of %d real inserts into the fast-filled store" % len(timed))
            rows.latencies(n, [pb.timed(["pass", "show", entry(c)], env=env, expect=c.password)
                               for c in map(pb.Credential, picked)], note)
    finally:
        subprocess.run(["gpgconf", "--homedir", gnupg, "--kill", "gpg-agent"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(home, ignore_errors=True)


def parse():
    ap = pb.arguments(__doc__)
    ap.add_argument("--max-fill", type=int, default=1000, help="largest size filled one insert at a time")
    ap.add_argument("--marginal", type=int, default=50, help="real inserts timed at a fast-filled size")
    return ap.parse_args()


if __name__ == "__main__":
    pb.main(PEER, parse, measure)
