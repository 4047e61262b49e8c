#!/usr/bin/env python3
"""`credstore get` on a key-file store beside the same command on a passphrase store unlocked with
`credstore unlock`, paired round by round, and the locked passphrase store (Argon2id each time) for
contrast (docs/performance.md, "An unlocked passphrase store").

    python3 Benchmarks/unlock_get.py PATH/TO/credstore [ROUNDS]
"""
import subprocess, sys, time, statistics, os, tempfile, shutil
B = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 31
work = tempfile.mkdtemp(prefix="unlockbench.")
env = dict(os.environ, XDG_STATE_HOME=os.path.join(work, "state"))
env.pop("CREDSTORE_PASSPHRASE", None)
kf = ["--store", os.path.join(work, "kf", "credentials.db")]
pp = ["--store", os.path.join(work, "pp", "credentials.db")]
pw = dict(env, CREDSTORE_PASSPHRASE="bench passphrase")
def run(args, e=env, stdin=None):
    return subprocess.run([B] + args, env=e, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
os.makedirs(os.path.join(work, "kf")); os.makedirs(os.path.join(work, "pp"))
assert run(["init"] + kf).returncode == 0
assert run(["init", "--passphrase"] + pp, pw).returncode == 0
for i in range(50):
    assert run(["add", "https://h%d.example.com" % i, "--user", "u", "--realm", "r"] + kf, stdin="p%d\n" % i).returncode == 0
    assert run(["add", "https://h%d.example.com" % i, "--user", "u", "--realm", "r"] + pp, pw, stdin="p%d\n" % i).returncode == 0
def timed(args, e):
    t = time.perf_counter(); r = run(args, e); d = time.perf_counter() - t
    assert r.returncode == 0, r.stderr
    return d
q = ["get", "https://h7.example.com", "--realm", "r"]
assert run(["unlock", "--timeout", "10m"] + pp, pw).returncode == 0
kfs, ups, lps, ratios = [], [], [], []
for i in range(rounds):
    a = timed(q + kf, env); b = timed(q + pp, env)
    kfs.append(a); ups.append(b); ratios.append(b / a)
run(["lock"] + pp)
for i in range(5):
    lps.append(timed(q + pp, pw))
print("rounds %d: key-file store get median %.2f ms; unlocked passphrase store get median %.2f ms; ratio (median of paired) %.3f (range %.2f-%.2f)" % (
    rounds, statistics.median(kfs) * 1000, statistics.median(ups) * 1000, statistics.median(ratios), min(ratios), max(ratios)))
print("locked passphrase store (CREDSTORE_PASSPHRASE, Argon2id) get median of 5: %.0f ms (%.0fx the key-file store)" % (
    statistics.median(lps) * 1000, statistics.median(lps) / statistics.median(kfs)))
shutil.rmtree(work)
