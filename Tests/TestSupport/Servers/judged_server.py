"""A local HTTP server for the tests, on 127.0.0.1 only, that judges each request with one of the
judges below (named by the first argument; the rest are the judge's) and counts the requests it
judged; /count reports that number without adding to it.
"""
import base64
import sys
import threading

from local_server import QuietHandler, serve

count = 0
lock = threading.Lock()


def basic(credentials):
    return "Basic " + base64.b64encode(credentials.encode()).decode()


def basic_auth(expected):
    """Basic auth for realm "test" from USER:PASSWORD."""
    expected = basic(expected)
    def judge(request):
        if request.headers.get("Authorization") == expected:
            request.reply(200, b"the protected body")
        else:
            request.reply(401, b"no", [("WWW-Authenticate", 'Basic realm="test"')])
    return judge


def proxy_and_origin(proxy, origin):
    """An authenticating proxy and a protected origin at once: without the proxy's
    Proxy-Authorization 407, then without the origin's Authorization 401, then 200."""
    proxy, origin = basic(proxy), basic(origin)
    def judge(request):
        if request.headers.get("Proxy-Authorization") != proxy:
            return request.reply(407, b"proxy", [("Proxy-Authenticate", 'Basic realm="proxy-realm"')])
        if request.headers.get("Authorization") != origin:
            return request.reply(401, b"origin", [("WWW-Authenticate", 'Basic realm="origin-realm"')])
        request.reply(200, b"through both")
    return judge


judge = {"basic-auth": basic_auth, "proxy-and-origin": proxy_and_origin}[sys.argv[1]](*sys.argv[2:])


class Handler(QuietHandler):
    def do_GET(self):
        global count
        if self.path == "/count":
            with lock:
                value = count
            return self.reply(200, str(value).encode())
        with lock:
            count += 1
        judge(self)


serve(Handler)
