"""What the tests' Python servers share: a quiet handler with a reply helper, and serving it on
127.0.0.1 on a port the kernel picks, printed as the first line.

A server exits by itself after 10 minutes, so it never outlives a test run by long (the test kills
it sooner). Not sooner: on a 2-core machine the whole suite's other tests can hold a test's
requests back for more than a minute, and a server gone by then fails them for nothing.
"""
import http.server
import os
import ssl
import threading


class QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(handler, certificate=None, key=None):
    """Serves `handler` until killed; https with `certificate` and `key` when given."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if certificate is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Timer(600, lambda: os._exit(0)).start()
    print(server.server_address[1], flush=True)
    server.serve_forever()
