"""An HTTP/3 client on aioquic, for interop tests.

    client.py URL OUTPUT [--header NAME:VALUE]... [--method GET]

Makes one request, writes the body to OUTPUT and prints one JSON object:
{"status", "headers": {name: value}, "bytes", "sha256"}. The server's
certificate is not verified (test servers are self-signed).
"""

import argparse
import asyncio
import hashlib
import json
import ssl
import sys
from urllib.parse import urlparse

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.done = None
        self.stream_id = None
        self.status = None
        self.headers = {}
        self.out = None
        self.hash = hashlib.sha256()
        self.count = 0

    def request(self, method, authority, path, extra, out):
        self.out = out
        self.stream_id = self._quic.get_next_available_stream_id()
        headers = [
            (b":method", method.encode()),
            (b":scheme", b"https"),
            (b":authority", authority.encode()),
            (b":path", path.encode()),
            (b"user-agent", b"aioquic-interop"),
        ] + extra
        self.h3.send_headers(self.stream_id, headers, end_stream=True)
        self.done = self._loop.create_future()
        self.transmit()
        return self.done

    def quic_event_received(self, event):
        if isinstance(event, ConnectionTerminated):
            if self.done is not None and not self.done.done():
                self.done.set_exception(
                    RuntimeError(f"connection closed: {event.reason_phrase!r} "
                                 f"(code {event.error_code:#x})"))
            return
        for e in self.h3.handle_event(event):
            if getattr(e, "stream_id", None) != self.stream_id:
                continue
            if isinstance(e, HeadersReceived):
                for name, value in e.headers:
                    if name == b":status":
                        self.status = int(value)
                    else:
                        self.headers[name.decode()] = value.decode()
            elif isinstance(e, DataReceived):
                self.out.write(e.data)
                self.hash.update(e.data)
                self.count += len(e.data)
            if getattr(e, "stream_ended", False) and not self.done.done():
                self.done.set_result(None)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("output")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--method", default="GET")
    a = p.parse_args()
    url = urlparse(a.url)
    extra = []
    for h in a.header:
        name, value = h.split(":", 1)
        extra.append((name.strip().lower().encode(), value.strip().encode()))

    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    config.verify_mode = ssl.CERT_NONE
    config.max_data = 64 << 20
    config.max_stream_data = 32 << 20
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    async with connect(url.hostname, url.port or 443, configuration=config,
                       create_protocol=Client) as client:
        with open(a.output, "wb") as out:
            await asyncio.wait_for(
                client.request(a.method, url.netloc, path, extra, out), 120)
        client.close()
    print(json.dumps({"status": client.status, "headers": client.headers,
                      "bytes": client.count,
                      "sha256": client.hash.hexdigest()}))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # one line for the test's assertion messages
        print(f"client.py: error: {e!r}", file=sys.stderr)
        sys.exit(1)
