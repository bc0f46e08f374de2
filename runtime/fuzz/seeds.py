#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target from real messages: the golden transcripts
(snapshots/wire/), the per-method fixtures of mcp-generated (generated/tests/messages/) and,
when the schema mirror is there, the official 2026-07-28 examples.

    python3 runtime/fuzz/seeds.py OUT_DIR      # writes OUT_DIR/<target>/<name>

The committed corpus (runtime/fuzz/corpus/) started from these seeds, grew by fuzzing and
was minimised with `cargo fuzz cmin`; rerun this to re-seed after the formats change.
The http_request seeds are `arbitrary` encodings of fuzz_targets/http_request.rs's `Input`
(arbitrary 1.x: an enum variant is a little-endian u32 scaled to the variant count, an
Option a byte whose low bit says Some, a [u8; N] N bytes, the last field the rest).
"""
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
REVS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
LEGACY = REVS[:4]


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def transcript(rev):
    """(direction, message) pairs of the golden session of `rev`."""
    path = os.path.join(ROOT, "snapshots", "wire", "transcript_%s.snap" % rev.replace("-", "_"))
    parts = re.split(r"^── #\d+ (client → server|server → client)\n", open(path, encoding="utf-8").read(), flags=re.M)
    out = []
    for direction, body in zip(parts[1::2], parts[2::2]):
        try:
            out.append(("client" if direction.startswith("client") else "server", json.loads(body)))
        except ValueError:
            pass
    return out


def fixtures(rev):
    d = os.path.join(ROOT, "generated", "tests", "messages", rev)
    if not os.path.isdir(d):
        return []
    return [json.load(open(os.path.join(d, f), encoding="utf-8")) for f in sorted(os.listdir(d)) if f.endswith(".json")]


def examples():
    mirror = os.environ.get("MCP_SCHEMA_DIR", os.path.join(ROOT, "..", "shared", "mcp-schemas"))
    d = os.path.join(mirror, "2026-07-28", "examples")
    out = []
    if os.path.isdir(d):
        for sub in sorted(os.listdir(d)):
            for f in sorted(os.listdir(os.path.join(d, sub))):
                if f.endswith(".json"):
                    out.append(json.load(open(os.path.join(d, sub, f), encoding="utf-8")))
    return out


class Writer:
    def __init__(self, out, target):
        self.dir = os.path.join(out, target)
        os.makedirs(self.dir, exist_ok=True)
        self.seen = set()

    def add(self, data):
        if data in self.seen:
            return
        self.seen.add(data)
        name = "seed-" + hashlib.sha1(data).hexdigest()
        with open(os.path.join(self.dir, name), "wb") as f:
            f.write(data)


# --- arbitrary encoding of http_request's Input ---------------------------------------

def variant(i, n):
    x = ((2 * i + 1) << 32) // (2 * n)
    return x.to_bytes(4, "little")


KNOWN = re.findall(r'^\s+"(.*)",$', re.search(r"const KNOWN: &\[&str\] = &\[\n(.*?)\n\];",
                   open(os.path.join(HERE, "fuzz_targets", "http_request.rs"), encoding="utf-8").read(), re.S).group(1), re.M)


def text(s):
    if s in KNOWN:
        return variant(0, 2) + bytes([KNOWN.index(s)])
    raw = s.encode()[:32]
    return variant(1, 2) + raw + bytes(32 - len(raw))


def opt(enc):
    return b"\x00" if enc is None else b"\x01" + enc


SETUP_NOTHING, SETUP_SESSION, SETUP_SSE = 0, 1, 2
METHODS = ["GET", "POST", "DELETE", "PUT", "OPTIONS", "HEAD", "PATCH"]


def http_input(setup=SETUP_NOTHING, rev=None, method="POST", path="mcp", host="localhost", origin=None,
               content_type="application/json", accept="application/json, text/event-stream",
               session=None, version=None, mcp_method=None, mcp_name=None, city=None, last_event_id=None, body=b""):
    out = variant(setup, 3)
    if setup == SETUP_SESSION:
        out += variant(LEGACY.index(rev), 4)
    out += variant(METHODS.index(method), 7)
    out += {"mcp": variant(0, 6), "sse": variant(1, 6), "messages": variant(2, 6),
            "messages-of-session": variant(3, 6)}[path]
    t = lambda s: None if s is None else text(s)
    out += opt(t(host)) + opt(t(origin)) + opt(t(content_type)) + opt(t(accept))
    out += opt(None if session is None else (variant(0, 2) if session == "setup" else variant(1, 2) + text(session)))
    out += opt(t(version)) + opt(t(mcp_method)) + opt(t(mcp_name)) + opt(t(city)) + opt(t(last_event_id))
    return out + body


def sse_and_jwt(out):
    """Seeds of sse_parser (chunk size, limit selector, stream) and jwt_token (a token, or
    claims that the target also wraps into one)."""
    sse = Writer(out, "sse_parser")
    jwt = Writer(out, "jwt_token")
    answer = compact({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}]}})
    streams = [
        b"event: endpoint\ndata: /messages?sessionId=abc\n\n",
        b"id: 0-1\nretry: 1000\ndata: \n\n" + b"id: 0-2\ndata: " + answer + b"\n\n",
        b": keep-alive\r\n\r\ndata: " + answer + b"\r\n\r\n",
        b"data: {\"a\":\ndata: 1}\r\rdata: x\r\n\r\n",
        b"data: " + b"y" * 2000 + b"\n\n",
        b"id: \x00\nevent: message\ndata\n\n",
    ]
    for stream in streams:
        for chunk in (0, 1, 7):
            for limit in (0, 1, 3):
                sse.add(bytes([chunk, limit]) + stream)
    claims = {"iss": "https://as.example.com", "aud": "https://mcp.example.com/mcp", "sub": "alice",
              "client_id": "app", "scope": "mcp:tools", "iat": 1699999000, "exp": 1700000600}
    variants = [claims, {**claims, "aud": ["x", "https://mcp.example.com/mcp/"]},
                {**claims, "iat": 1700009999}, {k: v for k, v in claims.items() if k not in ("sub", "client_id")},
                {**claims, "scp": ["a", "b"]}, {**claims, "exp": "soon"}, {**claims, "nbf": 1.5e300}]
    for c in variants:
        jwt.add(compact(c))
        header = b64url(compact({"alg": "RS256", "typ": "at+jwt", "kid": "a"}))
        jwt.add((header + "." + b64url(compact(c)) + ".c2ln").encode())
    for raw in [b"", b"a.b.c", b"..", b"e30.e30.", b"bm9uZQ.e30.e30.x"]:
        jwt.add(raw)


def b64url(data):
    import base64
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main(out):
    sse_and_jwt(out)
    frame = Writer(out, "jsonrpc_frame")
    msgs = Writer(out, "revision_messages")
    stdio = Writer(out, "stdio_lines")
    http = Writer(out, "http_request")

    for rev in REVS:
        session = transcript(rev)
        client = [m for d, m in session if d == "client"]
        for _, m in session:
            frame.add(compact(m))
            msgs.add(compact(m))
            if isinstance(m, dict) and "result" in m:
                msgs.add(compact(m["result"]))
        frame.add(compact(client[:3]))
        # The whole client side as one stream: at once (4096-byte lines), and in 7-byte
        # reads interleaved with work (1024-byte lines).
        stream = b"\n".join(compact(m) for m in client) + b"\n"
        stdio.add(bytes([0, 3]) + stream)
        stdio.add(bytes([7, 2 | 4]) + stream)
        for m in client:
            stdio.add(bytes([0, 3]) + compact(m) + b"\n")
        # HTTP: what this revision's client sends, on the transport it would use.
        if rev == "2026-07-28":
            for m in client:
                p = m.get("params") or {}
                name = p.get("name") if m.get("method") in ("tools/call", "prompts/get") else p.get("uri") if m.get("method") == "resources/read" else None
                city = (p.get("arguments") or {}).get("city") if m.get("method") == "tools/call" else None
                http.add(http_input(version=rev, mcp_method=m.get("method"), mcp_name=name, city=city, body=compact(m)))
        else:
            init = client[0]
            http.add(http_input(body=compact(init)))
            for m in client[1:]:
                if m.get("method") == "notifications/initialized":
                    continue
                http.add(http_input(SETUP_SESSION, rev, session="setup", version=rev, body=compact(m)))
            if rev == "2024-11-05":
                for m in client:
                    http.add(http_input(SETUP_SSE, path="messages-of-session", accept=None, body=compact(m)))
            http.add(http_input(SETUP_SESSION, rev, method="GET", session="setup", version=rev, accept="text/event-stream", content_type=None))
            http.add(http_input(SETUP_SESSION, rev, method="GET", session="setup", last_event_id="0-0", accept="text/event-stream", content_type=None))
            http.add(http_input(SETUP_SESSION, rev, method="DELETE", session="setup", content_type=None))
    http.add(http_input(method="GET", path="sse", accept="text/event-stream", content_type=None))
    http.add(http_input(origin="http://evil.example", body=b"{}"))
    http.add(http_input(host="evil.example", body=b"{}"))

    for rev in LEGACY:
        for fx in fixtures(rev):
            msgs.add(compact(fx["message"]))
            frame.add(compact(fx["message"]))
            if "result" in fx:
                msgs.add(compact(fx["result"]))
                msgs.add(compact({"jsonrpc": "2.0", "id": fx["message"].get("id", 1), "result": fx["result"]}))
    for ex in examples():
        msgs.add(compact(ex))

    # A few malformed and edge frames.
    for raw in [b"", b"[]", b"[1]", b"{", b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
                b'{"jsonrpc":"2.0","id":1.5e300,"result":{}}', b'{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m","data":[1]}}']:
        frame.add(raw)
        stdio.add(bytes([1, 0]) + raw + b"\n")
    stdio.add(bytes([3, 0]) + b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * 80 + b'"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n')


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus"))
