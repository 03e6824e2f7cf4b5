"""A real SMTP server for reclaim's email test: Debian's python3-aiosmtpd.

STARTTLS required (with the certificate the test generated), AUTH required
(PLAIN or LOGIN, only over TLS). Every message received is written to OUTDIR
as NNNN.eml (written to a temporary name, then renamed). Prints READY once it
accepts connections and runs until stdin is closed or it is killed.

usage: smtpd.py HOST PORT CERT KEY OUTDIR USER PASSWORD
"""
import os
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Handler:
    def __init__(self, outdir):
        self.outdir = outdir
        self.lock = threading.Lock()
        self.n = len([f for f in os.listdir(outdir) if f.endswith(".eml")])

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.n += 1
            name = "%04d.eml" % self.n
        tmp = os.path.join(self.outdir, "." + name)
        with open(tmp, "wb") as f:
            f.write(envelope.original_content or envelope.content)
        os.rename(tmp, os.path.join(self.outdir, name))
        with open(os.path.join(self.outdir, name + ".envelope"), "w") as f:
            f.write("tls=%s\nauth=%s\nfrom=%s\nto=%s\n" % (
                session.ssl is not None, session.authenticated, envelope.mail_from, ",".join(envelope.rcpt_tos)))
        return "250 Message accepted for delivery"


def main():
    host, port, cert, key, outdir, user, password = sys.argv[1:8]
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (mechanism in ("PLAIN", "LOGIN") and isinstance(auth_data, LoginPassword)
              and auth_data.login == user.encode() and auth_data.password == password.encode())
        return AuthResult(success=ok)

    controller = Controller(Handler(outdir), hostname=host, port=int(port),
                            tls_context=ctx, require_starttls=True,
                            auth_required=True, auth_require_tls=True,
                            authenticator=authenticator)
    controller.start()
    print("READY", flush=True)
    try:
        sys.stdin.read()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
