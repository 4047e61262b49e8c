"""Prints the htpasswd line (SHA) and the htdigest line (MD5) for USER PASSWORD REALM, as lighttpd
reads them: one per line."""
import base64, hashlib, sys

user, password, realm = sys.argv[1:4]
print(f"{user}:{{SHA}}{base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()}")
print(f"{user}:{realm}:{hashlib.md5(f'{user}:{realm}:{password}'.encode()).hexdigest()}")
