#!/usr/bin/env python3
"""git-credential-store: the plaintext file git keeps credentials in.

One `git credential-store --file FILE store|get|erase` process per operation, the credential on
stdin in git's credential protocol (protocol, host:port, path = realm, username), as git itself
runs the helper. Every store is filled for real, one credential at a time.
"""
import os
import shutil

import peerbench as pb

PEER = "git-credential-store"


def request(c, with_password):
    text = "protocol=https\nhost=%s:%d\npath=%s\nusername=%s\n" % (c.host, c.port, c.realm, c.user)
    if with_password:
        text += "password=%s\n" % c.password
    return text + "\n"


def measure(args, rows):
    pb.require("git")
    home = pb.scratch("git")
    try:
        store = os.path.join(home, "credentials")
        # No system or user configuration: only the helper and the file are measured.
        env = dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        helper = ["git", "credential-store", "--file", store]
        pb.spawn_floor(rows)
        floor = [pb.timed(helper + ["get"], request(pb.Credential(1), False), env) for _ in range(50)]
        rows.add(0, "invocation_floor_med_ms", pb.median(floor) * 1e3, "ms", len(floor), "get with no file yet")

        fill = pb.Fill(rows, lambda i: pb.timed(helper + ["store"], request(pb.Credential(i), True), env))
        for n in pb.sizes(args.sizes):
            fill.to(n)
            picked = [pb.Credential(i) for i in pb.lookup_sample(n, args.lookups)]
            rows.latencies(n, [pb.timed(helper + ["get"], request(c, False), env, expect="password=" + c.password)
                               for c in picked])
            rows.add(n, "file_bytes", os.path.getsize(store), "B")
        # The other direction of the protocol, once, at the largest size.
        erased = [pb.timed(helper + ["erase"], request(pb.Credential(i), False), env) for i in range(20)]
        rows.add(fill.count, "erase_med_ms", pb.median(erased) * 1e3, "ms", len(erased))
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    pb.main(PEER, lambda: pb.arguments(__doc__).parse_args(), measure)
