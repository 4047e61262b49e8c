#!/usr/bin/env python3
"""`credstore get` on a store with a plain key file beside the same command on a store whose key
file is sealed by systemd-creds (each `get` runs `systemd-creds decrypt`), paired round by round;
and, given a second binary, the same `get` of two builds side by side (docs/performance.md,
"Sealed key files and the TLS commands").

    python3 Benchmarks/key_kinds_get.py PATH/TO/credstore [ROUNDS] [PATH/TO/OTHER-credstore]

The sealed store needs systemd-creds that can seal as the user running this (root before
systemd 256); without it that row is skipped and says why.
"""
import subprocess, sys, time, statistics, os, tempfile, shutil
B = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 31
other = sys.argv[3] if len(sys.argv) > 3 else None
work = tempfile.mkdtemp(prefix="keykinds.")
env = dict(os.environ, XDG_STATE_HOME=os.path.join(work, "state"))
env.pop("CREDSTORE_PASSPHRASE", None)
plain = ["--store", os.path.join(work, "plain", "credentials.db")]
sealed = ["--store", os.path.join(work, "sealed", "credentials.db")]
def run(binary, args, stdin=None):
    return subprocess.run([binary] + args, env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
def timed(binary, args):
    t = time.perf_counter(); r = run(binary, args); d = time.perf_counter() - t
    assert r.returncode == 0, r.stderr
    return d
assert run(B, ["init"] + plain).returncode == 0
made = run(B, ["init", "--seal-with", "systemd-creds"] + sealed)
for i in range(50):
    assert run(B, ["add", "https://h%d.example.com" % i, "--user", "u", "--realm", "r"] + plain, stdin="p%d\n" % i).returncode == 0
    if made.returncode == 0:
        assert run(B, ["add", "https://h%d.example.com" % i, "--user", "u", "--realm", "r"] + sealed, stdin="p%d\n" % i).returncode == 0
q = ["get", "https://h7.example.com", "--realm", "r"]
if made.returncode == 0:
    a_s, b_s, ratios = [], [], []
    for _ in range(rounds):
        a = timed(B, q + plain); b = timed(B, q + sealed)
        a_s.append(a); b_s.append(b); ratios.append(b / a)
    print("rounds %d: plain key file get median %.2f ms; sealed key file get median %.2f ms; ratio (median of paired) %.2f (range %.2f-%.2f)" % (
        rounds, statistics.median(a_s) * 1000, statistics.median(b_s) * 1000, statistics.median(ratios), min(ratios), max(ratios)))
else:
    print("sealed key file: skipped (%s)" % made.stderr.strip())
if other:
    a_s, b_s, ratios = [], [], []
    for _ in range(rounds):
        a = timed(other, q + plain); b = timed(B, q + plain)
        a_s.append(a); b_s.append(b); ratios.append(b / a)
    print("rounds %d: %s get median %.2f ms; %s get median %.2f ms; ratio (median of paired) %.3f (range %.2f-%.2f)" % (
        rounds, other, statistics.median(a_s) * 1000, B, statistics.median(b_s) * 1000, statistics.median(ratios), min(ratios), max(ratios)))
shutil.rmtree(work)
