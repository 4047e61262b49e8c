#!/usr/bin/env python3
"""secret-tool (libsecret) against gnome-keyring-daemon: the Secret Service of a desktop session.

The driver starts itself again under `dbus-run-session`, with HOME and XDG_* in a scratch folder,
so it has a session bus of its own; there it starts gnome-keyring-daemon (secrets component only,
unlocked with a keyring password on stdin) and stops it at the end. Items go into the login
collection, which the daemon writes to an encrypted file, login.keyring. One `secret-tool store`
or `secret-tool lookup` process per operation, attributes host, port, protocol and realm.

gnome-keyring rewrites and re-encrypts the whole keyring file on each store, so an insert costs
O(N): sizes above --max-fill (default 1,000) are not filled, and are reported as not run.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

import peerbench as pb

PEER = "secret-tool+gnome-keyring"


def attributes(c):
    return ["host", c.host, "port", str(c.port), "protocol", "https", "realm", c.realm]


def wait_for_daemon(daemon):
    """Until the daemon owns org.freedesktop.secrets: a secret-tool run before that would have
    D-Bus activate a second daemon, with a locked keyring."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        owner = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                                "string:org.freedesktop.secrets"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if b"boolean true" in owner.stdout:
            return
        if daemon.poll() is not None:
            raise pb.NotRun("gnome-keyring-daemon exited with status %d" % daemon.returncode)
        time.sleep(0.1)
    raise pb.NotRun("gnome-keyring-daemon did not take org.freedesktop.secrets within 15 s")


def measure_on_session_bus(args, rows):
    log = open(os.path.join(os.environ["HOME"], "gnome-keyring.log"), "wb")
    daemon = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                              stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
    try:
        daemon.stdin.write(b"peer-benchmark-keyring-password")
        daemon.stdin.close()
        wait_for_daemon(daemon)
        # The first store creates and unlocks the login collection; check it works before timing.
        probe = subprocess.run(["secret-tool", "store", "--label=probe", "probe", "1"], input=b"x",
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        if probe.returncode != 0:
            raise pb.NotRun("secret-tool store failed: %s" % probe.stderr.decode(errors="replace").strip()[-200:])
        subprocess.run(["secret-tool", "clear", "probe", "1"], check=False)

        pb.spawn_floor(rows)
        floor = [pb.timed(["secret-tool", "lookup"] + attributes(pb.Credential(10 ** 9)), check=False)
                 for _ in range(50)]
        rows.add(0, "invocation_floor_med_ms", pb.median(floor) * 1e3, "ms", len(floor),
                 "lookup of an item that is not there")

        def insert(i):
            c = pb.Credential(i)
            return pb.timed(["secret-tool", "store", "--label=credstore benchmark"] + attributes(c), c.password)

        fill = pb.Fill(rows, insert)
        keyring = os.path.join(os.environ["XDG_DATA_HOME"], "keyrings", "login.keyring")
        for n in pb.sizes(args.sizes):
            if n > args.max_fill:
                rows.not_run(n, "not filled past {:,}: each store rewrites the whole keyring file, O(N) per insert"
                             .format(args.max_fill))
                continue
            fill.to(n)
            picked = [pb.Credential(i) for i in pb.lookup_sample(n, args.lookups)]
            rows.latencies(n, [pb.timed(["secret-tool", "lookup"] + attributes(c), expect=c.password) for c in picked])
            if os.path.exists(keyring):
                rows.add(n, "file_bytes", os.path.getsize(keyring), "B")
    finally:
        daemon.terminate()
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()


def measure(args, rows):
    pb.require("secret-tool", "gnome-keyring-daemon", "dbus-run-session", "dbus-send")
    home = pb.scratch("secret-tool")
    try:
        runtime = os.path.join(home, "runtime")
        os.makedirs(runtime, mode=0o700)
        env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"),
                   XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_CACHE_HOME=os.path.join(home, "cache"),
                   XDG_RUNTIME_DIR=runtime)
        # Nothing of the caller's session may be reached: not its bus, its keyring or its display.
        for name in ("DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL", "SSH_AUTH_SOCK", "DISPLAY", "WAYLAND_DISPLAY"):
            env.pop(name, None)
        argv = ["dbus-run-session", "--", sys.executable, os.path.abspath(__file__), "--on-session-bus",
                "--out", os.path.abspath(args.out), "--sizes", args.sizes, "--lookups", str(args.lookups),
                "--max-fill", str(args.max_fill)]
        inner = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # dbus-daemon warns that it cannot raise its fd limit when not root; that is not news. The
        # rest of stderr goes first, so the inner run's own last line stays the last.
        err = [l for l in inner.stderr.decode(errors="replace").splitlines() if "fd limit" not in l]
        if err:
            sys.stdout.write("\n".join(err) + "\n")
        out = inner.stdout.decode(errors="replace")
        sys.stdout.write(out)
        sys.stdout.flush()
        if inner.returncode != 0:
            last = out.strip().splitlines()[-1:]
            if not last or not last[0].startswith(("not run:", "failed:")):
                # The driver never ran: dbus-run-session itself could not give it a bus.
                raise pb.NotRun("dbus-run-session failed (exit %d): %s" % (inner.returncode, (err or ["?"])[-1]))
            sys.exit(inner.returncode)  # the inner run has written its own last line and rows
    finally:
        shutil.rmtree(home, ignore_errors=True)


def parse():
    ap = pb.arguments(__doc__)
    ap.add_argument("--max-fill", type=int, default=1000, help="largest size filled (default 1000)")
    ap.add_argument("--on-session-bus", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args()


if __name__ == "__main__":
    arguments = parse()
    pb.main(PEER, lambda: arguments, measure_on_session_bus if arguments.on_session_bus else measure)
