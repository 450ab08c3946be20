"""A static file server on aioquic's HTTP/3, for interop tests.

    server.py --root DIR [--port 0] [--bad-digest] [--truncate N] [--cert-out PEM]

Prints "listening on PORT" once ready, then serves until killed. GET and
HEAD of the files directly under --root; content-length, a strong etag,
repr-digest (sha-256), and single `bytes=N-` / `bytes=N-M` ranges honoured
when if-range (if sent) matches. --bad-digest sends a wrong digest;
--truncate N ends every body after N bytes although content-length
promises more. A self-signed certificate for localhost, 127.0.0.1 and ::1
is made at start (--cert-out writes a copy, for a client to trust).
"""

import argparse
import asyncio
import base64
import datetime
import hashlib
import ipaddress
import os
import sys
import tempfile

from aioquic.asyncio import serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

OPTIONS = None


def self_signed(directory):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"),
                 x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                 x509.IPAddress(ipaddress.ip_address("::1"))]),
                critical=False)
            .sign(key, hashes.SHA256()))
    cert_path = os.path.join(directory, "cert.pem")
    key_path = os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path


def describe(path):
    with open(path, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).digest()
    if OPTIONS.bad_digest:
        digest = hashlib.sha256(data + b"x").digest()
    etag = '"sha-%s"' % hashlib.sha256(data).hexdigest()[:16]
    return data, etag, "sha-256=:%s:" % base64.b64encode(digest).decode()


class FileServer(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)

    def quic_event_received(self, event):
        for e in self.h3.handle_event(event):
            if isinstance(e, HeadersReceived):
                self.answer(e.stream_id, dict(e.headers))
        self.transmit()

    def respond(self, stream_id, status, fields, body):
        headers = [(b":status", str(status).encode())] + [
            (k.encode(), v.encode()) for k, v in fields]
        self.h3.send_headers(stream_id, headers, end_stream=body is None)
        if body is not None:
            self.h3.send_data(stream_id, body, end_stream=True)

    def answer(self, stream_id, headers):
        method = headers.get(b":method", b"").decode()
        name = headers.get(b":path", b"/").decode().split("?")[0].lstrip("/")
        path = os.path.join(OPTIONS.root, name)
        if method not in ("GET", "HEAD"):
            return self.respond(stream_id, 405, [("allow", "GET, HEAD")], b"")
        if "/" in name or name in ("", ".", "..") or not os.path.isfile(path):
            return self.respond(stream_id, 404, [("content-length", "10")],
                                None if method == "HEAD" else b"not found\n")
        data, etag, digest = describe(path)
        fields = [("etag", etag), ("repr-digest", digest),
                  ("accept-ranges", "bytes")]
        status, start, end = 200, 0, len(data)
        rng = headers.get(b"range", b"").decode()
        if_range = headers.get(b"if-range", b"").decode()
        if rng.startswith("bytes=") and (not if_range or if_range == etag):
            first, _, last = rng[len("bytes="):].partition("-")
            start = int(first)
            end = int(last) + 1 if last else len(data)
            if start >= len(data):
                return self.respond(
                    stream_id, 416,
                    fields + [("content-range", "bytes */%d" % len(data)),
                              ("content-length", "0")], b"")
            end = min(end, len(data))
            status = 206
            fields.append(("content-range",
                           "bytes %d-%d/%d" % (start, end - 1, len(data))))
        body = data[start:end]
        fields.append(("content-length", str(len(body))))
        if OPTIONS.truncate is not None:
            body = body[:OPTIONS.truncate]
        self.respond(stream_id, status, fields,
                     None if method == "HEAD" else body)


async def main():
    global OPTIONS
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--bad-digest", action="store_true")
    p.add_argument("--truncate", type=int)
    p.add_argument("--cert-out")
    OPTIONS = p.parse_args()

    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN)
    config.max_data = 64 << 20
    config.max_stream_data = 32 << 20
    with tempfile.TemporaryDirectory() as d:
        cert, key = self_signed(d)
        config.load_cert_chain(cert, key)
        if OPTIONS.cert_out:
            with open(cert, "rb") as src, open(OPTIONS.cert_out, "wb") as dst:
                dst.write(src.read())
    server = await serve("127.0.0.1", OPTIONS.port, configuration=config,
                         create_protocol=FileServer)
    port = server._transport.get_extra_info("sockname")[1]
    print("listening on %d" % port, flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    except Exception as e:
        print(f"server.py: error: {e!r}", file=sys.stderr)
        sys.exit(1)
