"""A hostile HTTP server for the networking tests, on 127.0.0.1 only.

    python3 hostile_server.py CONFIG.json LOG.jsonl [CERT.pem KEY.pem]

Prints its port on the first line of stdout, logs every request it reads (method, path, headers
with lowercased names, body) as one JSON line in LOG, and answers by the route of the path in
CONFIG, a JSON object {"routes": {PATH: ROUTE}}, re-read on every request so that a test can
write it after learning the ports of the other servers. A ROUTE may hold:

  "challenge": [values]   401 with one WWW-Authenticate header per value, unless the request
                          carries Authorization ("status": 407 makes it a 407 with
                          Proxy-Authenticate, judged on Proxy-Authorization)
  "redirect": {"status": 307, "location": "http://..."}
                          sent once the challenge (if any) is passed

Anything else gets 200 "ok". With CERT and KEY it serves TLS (the test makes its own CA). It exits
by itself after 10 minutes.
"""
import json
import sys
import threading

from local_server import QuietHandler, serve

config_path, log_path = sys.argv[1], sys.argv[2]
lock = threading.Lock()


class Handler(QuietHandler):
    protocol_version = "HTTP/1.1"

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        entry = {"method": self.command, "path": self.path,
                 "headers": {name.lower(): value for name, value in self.headers.items()},
                 "body": body}
        with lock:
            with open(log_path, "a") as log:
                log.write(json.dumps(entry) + "\n")
        with open(config_path) as file:
            routes = json.load(file).get("routes", {})
        # A proxied request names the absolute URL; route on its path.
        path = self.path.split("://", 1)[-1]
        path = path[path.index("/"):] if "://" in self.path else path
        route = routes.get(path.split("?", 1)[0], {})
        challenge = route.get("challenge")
        if challenge is not None:
            status = route.get("status", 401)
            asked = "Proxy-Authorization" if status == 407 else "Authorization"
            if self.headers.get(asked) is None:
                name = "Proxy-Authenticate" if status == 407 else "WWW-Authenticate"
                return self.reply(status, b"challenge", [(name, value) for value in challenge])
        redirect = route.get("redirect")
        if redirect is not None:
            return self.reply(redirect["status"], b"moved", [("Location", redirect["location"])])
        self.reply(200, b"ok")

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = handle_any


serve(Handler, *sys.argv[3:5])
