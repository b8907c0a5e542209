#!/usr/bin/env python3
"""A client of the Firebase SDKs' realtime WebSocket protocol (v5), written from the protocol notes
and the JS SDK's captured conversation, driving `canopy serve` frame by frame.

Usage: wire_protocol_client.py BASE_URL SCENARIO   (BASE_URL like ws://127.0.0.1:9000)
Prints "wire: SCENARIO ok" and exits 0 when every check of the scenario holds; otherwise prints
what differed and exits 1.
"""
import asyncio
import base64
import hashlib
import hmac
import json
import struct
import sys
import time
import urllib.request

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

FRAME_LIMIT = 16384


def fail(message):
    raise AssertionError(message)


def check(condition, message):
    if not condition:
        fail(message)


def firebase_hash(value):
    """The SDKs' data hash (base64 SHA-1 of a canonical text) for values without priorities."""
    def leaf(v):
        if isinstance(v, bool):
            return "boolean:" + ("true" if v else "false")
        if isinstance(v, (int, float)):
            return "number:" + struct.pack(">d", float(v)).hex()
        return "string:" + v

    def text(v):
        if v is None:
            return ""
        if isinstance(v, dict):
            out = ""
            for key in sorted(v, key=key_order):
                child = node_hash(v[key])
                if child:
                    out += ":" + key + ":" + child
            return out
        return leaf(v)

    def node_hash(v):
        t = text(v)
        return base64.b64encode(hashlib.sha1(t.encode()).digest()).decode() if t else ""

    return node_hash(value)


def key_order(key):
    try:
        n = int(key)
        if -(2 ** 31) <= n < 2 ** 31 and str(n) == key:
            return (0, n, "")
    except ValueError:
        pass
    return (1, 0, key)


class Client:
    """One SDK connection: sends requests with increasing `r`, reassembles split messages."""

    def __init__(self, ws):
        self.ws = ws
        self.next_r = 1
        self.hello = None
        self.pending = []

    @classmethod
    async def open(cls, base, ns="wire", ls=None, headers=None):
        url = f"{base}/.ws?v=5" + (f"&ls={ls}" if ls else "") + f"&ns={ns}"
        ws = await connect(url, additional_headers=headers or {}, max_size=None, ping_interval=None,
                           open_timeout=30)
        client = cls(ws)
        hello = await client.recv()
        check(hello.get("t") == "c" and hello["d"].get("t") == "h", f"first message is the hello: {hello}")
        client.hello = hello["d"]["d"]
        return client

    async def send_text(self, text):
        if len(text) <= FRAME_LIMIT:
            await self.ws.send(text)
            return
        chunks = [text[i:i + FRAME_LIMIT] for i in range(0, len(text), FRAME_LIMIT)]
        await self.ws.send(str(len(chunks)))
        for chunk in chunks:
            await self.ws.send(chunk)

    async def send(self, message):
        await self.send_text(json.dumps(message, separators=(",", ":")))

    async def recv(self, timeout=30):
        first = await asyncio.wait_for(self.ws.recv(), timeout)
        check(isinstance(first, str), f"text frames only, got {first!r}")
        check(first != "0", "the server must never send a bare 0")
        if len(first) <= 6 and first.isdigit():
            count = int(first)
            check(1 <= count <= 9999, f"frame count {count} out of range")
            parts = []
            for _ in range(count):
                part = await asyncio.wait_for(self.ws.recv(), timeout)
                check(isinstance(part, str) and len(part) <= FRAME_LIMIT, "pieces are text of at most 16384 characters")
                parts.append(part)
            first = "".join(parts)
        return json.loads(first)

    async def request(self, action, body):
        r = self.next_r
        self.next_r += 1
        await self.send({"t": "d", "d": {"r": r, "a": action, "b": body}})
        return r

    async def response(self, r, timeout=30):
        """Reads until the response to `r`; returns (pushes before it, its body)."""
        pushes = []
        while True:
            message = await self.recv(timeout)
            check(message.get("t") == "d", f"a data message: {message}")
            d = message["d"]
            if "r" in d:
                check(d["r"] == r, f"response to {r} expected, got {message}")
                body = d["b"]
                check("s" in body, f"every response has b.s: {message}")
                return pushes, body
            check("a" in d and "b" in d, f"a push has a and b: {message}")
            if d["a"] in ("d", "m"):
                check("d" in d["b"], f"a data push always has d: {message}")
            pushes.append(d)

    async def call(self, action, body):
        r = await self.request(action, body)
        return await self.response(r)

    async def ok(self, action, body):
        pushes, body_ = await self.call(action, body)
        check(body_["s"] == "ok", f"{action} {body} answered {body_}")
        return pushes, body_.get("d")

    async def push(self, timeout=30):
        message = await self.recv(timeout)
        check(message.get("t") == "d" and "a" in message["d"], f"a push expected, got {message}")
        return message["d"]

    async def no_message(self, seconds=0.3):
        try:
            message = await self.recv(seconds)
        except asyncio.TimeoutError:
            return
        fail(f"no message expected, got {message}")

    async def close(self):
        await self.ws.close()


def split_path(path):
    return [segment for segment in path.split("/") if segment]


def apply_push(tree, listen_path, push):
    """Applies a `d` or `m` push to a local copy of the data at `listen_path`."""
    rel = split_path(push["p"])[len(split_path(listen_path)):]
    if push["a"] == "d":
        return set_at(tree, rel, push["d"])
    for key, value in push["d"].items():
        tree = set_at(tree, rel + split_path(key), value)
    return tree


def set_at(tree, path, value):
    if not path:
        return value
    tree = dict(tree) if isinstance(tree, dict) else {}
    child = set_at(tree.get(path[0]), path[1:], value)
    if child is None or child == {}:
        tree.pop(path[0], None)
    else:
        tree[path[0]] = child
    return tree or None


POSTS = {"p1": {"title": "a", "starCount": 5}, "p2": {"title": "b", "starCount": 9}, "p3": {"title": "c", "starCount": 1}}
TOP2 = {"l": 2, "vf": "r", "i": "starCount"}


async def handshake(base):
    a = await Client.open(base)
    b = await Client.open(base)
    host = base.split("//", 1)[1]
    for hello in (a.hello, b.hello):
        check(hello["v"] == "5", f"hello v: {hello}")
        check(hello["h"] == host, f"hello h echoes the Host header {host}: {hello}")
        check(isinstance(hello["ts"], int) and abs(hello["ts"] - time.time() * 1000) < 60_000, f"hello ts is integer ms now: {hello}")
        check(isinstance(hello["s"], str) and hello["s"], f"hello s: {hello}")
    check(a.hello["s"] != b.hello["s"], "session ids are unique")
    # Stats first, as every SDK sends them.
    _, data = await a.ok("s", {"c": {"sdk.js.12-18-0": 1}})
    check(data == "", f"stats answer d \"\": {data!r}")
    # A keep-alive "0" is swallowed; a control ping is answered with a pong.
    await a.ws.send("0")
    await a.send({"t": "c", "d": {"t": "p", "d": {}}})
    pong = await a.recv()
    check(pong == {"t": "c", "d": {"t": "o", "d": {}}}, f"pong: {pong}")
    await a.close()
    await b.close()


async def captured_conversation(base):
    """The JS SDK's conversation: a tagged limitToLast(2) listen, another client's put, a put with
    a server timestamp, a merge with multi-segment keys, unlisten."""
    setup = await Client.open(base)
    await setup.ok("p", {"p": "/posts", "d": POSTS})
    a = await Client.open(base)
    b = await Client.open(base)
    await a.ok("s", {"c": {"sdk.node.12-18-0": 1}})
    pushes, data = await a.ok("q", {"p": "/posts", "q": TOP2, "t": 1, "h": ""})
    check(data == {}, f"listen ok data is an object: {data!r}")
    check(len(pushes) == 1 and pushes[0]["a"] == "d" and pushes[0]["b"].get("t") == 1, f"the window, tagged, before the ack: {pushes}")
    window = apply_push(None, "/posts", pushes[0]["b"] | {"a": "d"})
    check(window == {"p1": POSTS["p1"], "p2": POSTS["p2"]}, f"initial window: {window}")

    def follow(window, push):
        check(push["a"] in ("d", "m") and push["b"].get("t") == 1, f"a tagged push: {push}")
        return apply_push(window, "/posts", push["b"] | {"a": push["a"]})

    # Another client's write arrives as a push.
    await b.ok("p", {"p": "/posts/p4", "d": {"starCount": 20, "title": "d"}})
    window = follow(window, await a.push())
    check(window == {"p2": POSTS["p2"], "p4": {"starCount": 20, "title": "d"}}, f"window after p4: {window}")
    # This client's own put outside the window: acknowledged, no push.
    pushes, _ = await a.ok("p", {"p": "/posts/p5", "d": {"starCount": 7, "title": "e", "ts": {".sv": "timestamp"}}})
    check(pushes == [], f"p5 is outside the window: {pushes}")
    _, p5 = await b.ok("g", {"p": "/posts/p5/ts", "q": {}})
    check(isinstance(p5, int) and abs(p5 - time.time() * 1000) < 60_000, f"server timestamp resolved: {p5}")
    # A merge with a multi-segment key and a delete; the push comes before the ack.
    pushes, _ = await a.ok("m", {"p": "/posts", "d": {"p1/starCount": 30, "p3": None}})
    check(len(pushes) == 1, f"one push before the merge's ack: {pushes}")
    window = follow(window, pushes[0])
    check(window == {"p4": {"starCount": 20, "title": "d"}, "p1": {"title": "a", "starCount": 30}}, f"window after merge: {window}")
    # Unlisten: no more pushes.
    await a.ok("n", {"p": "/posts", "q": TOP2, "t": 1})
    await b.ok("p", {"p": "/posts/p6", "d": {"starCount": 99, "title": "f"}})
    await a.no_message()
    for c in (setup, a, b):
        await c.close()


async def default_listen(base):
    """A default listen follows every write at, above and below its location."""
    a = await Client.open(base)
    b = await Client.open(base)
    await b.ok("p", {"p": "/rooms", "d": {"r1": {"name": "one", "members": {"ada": True}}}})
    pushes, _ = await a.ok("q", {"p": "/rooms/r1", "h": ""})
    check(len(pushes) == 1 and "t" not in pushes[0]["b"], f"untagged initial data: {pushes}")
    local = apply_push(None, "/rooms/r1", pushes[0]["b"] | {"a": "d"})
    writes = [
        ("p", {"p": "/rooms/r1/members/grace", "d": True}),        # below
        ("m", {"p": "/rooms/r1", "d": {"name": "uno", "topic/text": "hi"}}),  # at, multi-segment
        ("m", {"p": "/rooms", "d": {"r1/name": "eins", "r2": {"name": "two"}}}),  # above, partly inside
        ("p", {"p": "/rooms/r1/members/ada", "d": None}),           # delete below
        ("p", {"p": "/rooms", "d": {"r1": {"name": "neu"}}}),        # set above
    ]
    for action, body in writes:
        await b.ok(action, body)
        push = await a.push()
        check("t" not in push["b"], f"default pushes carry no tag: {push}")
        local = apply_push(local, "/rooms/r1", push["b"] | {"a": push["a"]})
        _, server = await b.ok("g", {"p": "/rooms/r1", "q": {}})
        check(local == server, f"after {action} {body}: local {local} != server {server}")
    # A write elsewhere is not pushed.
    await b.ok("p", {"p": "/elsewhere", "d": 1})
    await a.no_message()
    await a.close()
    await b.close()


async def large_messages(base):
    """A 40,000-character put arrives split by the client; the server splits its answer."""
    a = await Client.open(base)
    text = "x" * 40_000
    await a.ok("p", {"p": "/blobs/b1", "d": text})
    # The get's answer is over 16,384 characters: the server must split it.
    r = await a.request("g", {"p": "/blobs/b1", "q": {}})
    count = await asyncio.wait_for(a.ws.recv(), 10)
    check(count.isdigit() and int(count) == 3, f"a count frame first: {count[:20]!r}")
    pieces = [await asyncio.wait_for(a.ws.recv(), 10) for _ in range(int(count))]
    answer = json.loads("".join(pieces))
    check(answer["d"]["r"] == r and answer["d"]["b"]["d"] == text, "the split answer reassembles to the value")
    await a.close()


async def transactions(base):
    """A put with h is a compare-and-set on the Firebase data hash: datastale on a mismatch."""
    check(firebase_hash(5) == "w28swksk9+tXf5jEdS9R5oSFAv8=", "the test's own hash matches the spec")
    a = await Client.open(base)
    await a.ok("p", {"p": "/counter", "d": 5})
    pushes, _ = await a.ok("q", {"p": "/counter", "h": ""})
    check(pushes and pushes[0]["b"]["d"] == 5, f"the counter's value: {pushes}")
    _, stale = await a.call("p", {"p": "/counter", "d": 6, "h": ""})
    check(stale["s"] == "datastale" and isinstance(stale["d"], str), f"h \"\" against 5 is stale: {stale}")
    pushes, _ = await a.ok("p", {"p": "/counter", "d": 6, "h": firebase_hash(5)})
    check([p["b"]["d"] for p in pushes] == [6], f"the new value pushed before the ack: {pushes}")
    obj = {"b": "x", "a": 1, "10": True, "2": False}
    await a.ok("p", {"p": "/tx/obj", "d": obj})
    _, ok = await a.call("p", {"p": "/tx/obj", "d": 1, "h": "j1UMxjbZyssb7A3c5BbZk64n6I8="})
    check(ok["s"] == "ok", f"the spec's object hash matches: {ok}")
    await a.close()


async def trigger_write(base):
    """A rating written over the WebSocket fires the server's trigger (registered by the test with
    NamespaceStore.onDatabaseOpen), whose aggregate write the client then reads back."""
    a = await Client.open(base)
    await a.ok("p", {"p": "/restaurants/ws/ratings/w1", "d": {"rating": 4}})
    await a.ok("p", {"p": "/restaurants/ws/ratings/w2", "d": {"rating": 1}})
    pushes, _ = await a.ok("q", {"p": "/restaurants/ws", "h": ""})
    check(pushes, f"the restaurant's data is pushed: {pushes}")
    data = pushes[-1]["b"]["d"]
    check(data.get("numRatings") == 2 and data.get("avgRating") == 2.5, f"the trigger kept the aggregate: {data}")
    await a.close()


async def on_disconnect(base):
    """onDisconnect put/merge/cancel run when the socket drops, and are seen by other clients."""
    watcher = await Client.open(base)
    await watcher.ok("p", {"p": "/presence", "d": {"a": True, "b": True, "c": True}})
    pushes, _ = await watcher.ok("q", {"p": "/presence", "h": ""})
    local = apply_push(None, "/presence", pushes[0]["b"] | {"a": "d"})
    a = await Client.open(base)
    await a.ok("o", {"p": "/presence/a", "d": False})
    await a.ok("om", {"p": "/presence", "d": {"b": None, "last/seen": {".sv": "timestamp"}}})
    await a.ok("o", {"p": "/presence/c", "d": "gone"})
    await a.ok("oc", {"p": "/presence/c", "d": None})
    # Abrupt drop: no close frame.
    a.ws.transport.abort()
    deadline = time.time() + 10
    while True:
        push = await watcher.push(timeout=10)
        local = apply_push(local, "/presence", push["b"] | {"a": push["a"]})
        if local.get("a") is False and "b" not in local and "last" in local:
            break
        check(time.time() < deadline, f"onDisconnect writes not seen: {local}")
    check(local["c"] is True, f"the cancelled onDisconnect did not run: {local}")
    check(isinstance(local["last"]["seen"], int), f"server values resolved at disconnect: {local}")
    await watcher.close()


async def reconnect_with_ls(base):
    """A client that reconnects naming its previous session (ls) runs that session's onDisconnect
    writes at once, even though the old socket is still open."""
    watcher = await Client.open(base)
    await watcher.ok("p", {"p": "/online/a", "d": True})
    pushes, _ = await watcher.ok("q", {"p": "/online/a", "h": ""})
    old = await Client.open(base)
    await old.ok("o", {"p": "/online/a", "d": False})
    new = await Client.open(base, ls=old.hello["s"])
    check(new.hello["s"] != old.hello["s"], "a new session id")
    push = await watcher.push(timeout=10)
    check(push["b"]["d"] is False and split_path(push["b"]["p"]) == ["online", "a"], f"old session's onDisconnect ran: {push}")
    # Closing the old socket later does not run it again.
    await old.close()
    await watcher.no_message(0.5)
    await new.close()
    await watcher.close()


async def queries_and_gets(base):
    """Tagged listens with key bounds, sentinels and limits, and gets with queries."""
    a = await Client.open(base)
    scores = {"k1": {"s": 3}, "k2": {"s": 3}, "k3": {"s": 5}, "k4": {"s": 9}, "k5": {"s": 1}}
    await a.ok("p", {"p": "/scores", "d": scores})
    cases = [
        ({"sp": 3, "sn": "k1", "sin": False, "i": "s"}, ["k2", "k3", "k4"]),
        ({"sp": 3, "sn": "[MAX_NAME]", "sin": False, "l": 10, "vf": "l", "i": "s"}, ["k3", "k4"]),
        ({"ep": 5, "en": "[MIN_NAME]", "ein": False, "i": "s"}, ["k1", "k2", "k5"]),
        ({"sp": "k2", "sin": True, "ep": "k4", "ein": False, "i": ".key"}, ["k2", "k3"]),
        ({"sp": 3, "sin": True, "ep": 3, "ein": True, "i": "s"}, ["k1", "k2"]),
        ({"l": 2, "vf": "l", "i": "s"}, ["k1", "k5"]),
    ]
    for tag, (query, keys) in enumerate(cases, start=1):
        _, data = await a.ok("g", {"p": "/scores", "q": query})
        check(sorted((data or {}).keys()) == keys, f"get {query}: {data}")
        pushes, _ = await a.ok("q", {"p": "/scores", "q": query, "t": tag, "h": ""})
        check(len(pushes) == 1 and pushes[0]["b"]["t"] == tag, f"listen {query}: {pushes}")
        check(sorted((pushes[0]["b"]["d"] or {}).keys()) == keys, f"listen {query}: {pushes}")
    _, bad = await a.call("q", {"p": "/scores", "q": {"l": 0, "vf": "l"}, "t": 99, "h": ""})
    check(bad["s"] != "ok" and isinstance(bad["d"], str), f"a bad query is refused: {bad}")
    _, bad = await a.call("p", {"p": "/a.b", "d": 1})
    check(bad["s"] == "invalid_path" and isinstance(bad["d"], str), f"a bad path is refused: {bad}")
    _, bad = await a.call("p", {"p": "/x", "d": {"a.b": 1}})
    check(bad["s"] == "invalid_key", f"a bad key is refused: {bad}")
    _, data = await a.ok("g", {"p": "/scores", "q": {}})
    check(data == scores, "refused writes changed nothing")
    # setPriority is a put at LOCATION/.priority; data comes back with priorities (export format).
    await a.ok("p", {"p": "/scores/k1/.priority", "d": 7})
    _, data = await a.ok("g", {"p": "/scores/k1", "q": {}})
    check(data == {"s": 3, ".priority": 7}, f"the priority is set and read back: {data}")
    _, bad = await a.call("p", {"p": "/missing/.priority", "d": 7})
    check(bad["s"] != "ok" and isinstance(bad["d"], str), f"a priority on a missing location is refused: {bad}")
    await a.close()


async def admin_token(base):
    """With --auth-token, nothing but stats and auth before the token; owner is not enough; and a
    connection without the token opens no database (the server allows two namespaces here)."""
    for ns in ("n1", "n2", "n3"):
        stranger = await Client.open(base, ns=ns)
        _, denied = await stranger.call("q", {"p": "/", "h": ""})
        check(denied["s"] == "permission_denied", f"listen without the token in {ns}: {denied}")
        await stranger.close()
    a = await Client.open(base)
    await a.ok("s", {"c": {"sdk.js.12-18-0": 1}})
    _, denied = await a.call("q", {"p": "/private", "h": ""})
    check(denied["s"] == "permission_denied" and isinstance(denied["d"], str), f"listen before auth: {denied}")
    _, denied = await a.call("p", {"p": "/private/x", "d": 1})
    check(denied["s"] == "permission_denied", f"put before auth: {denied}")
    _, refused = await a.call("gauth", {"cred": "owner"})
    check(refused["s"] == "invalid_token", f"owner is not the admin token: {refused}")
    await a.ok("gauth", {"cred": "s3cret"})
    await a.ok("p", {"p": "/private/x", "d": 1})
    await a.ok("unauth", {})
    _, denied = await a.call("g", {"p": "/private/x", "q": {}})
    check(denied["s"] == "permission_denied", f"get after unauth: {denied}")
    await a.close()
    b = await Client.open(base, headers={"Authorization": "Bearer s3cret"})
    _, value = await b.ok("g", {"p": "/private/x", "q": {}})
    check(value == 1, f"the Authorization header authenticates the connection: {value}")
    await b.close()


async def bad_frames(base):
    """Garbage, binary and oversized frames close the connection with a clear code."""
    async def closed_with(send, code):
        c = await Client.open(base)
        await send(c)
        try:
            message = await c.recv(10)
            fail(f"expected a close, got {message}")
        except ConnectionClosed as closed:
            check(closed.rcvd is not None and closed.rcvd.code == code, f"close code {code} expected, got {closed.rcvd}")
    await closed_with(lambda c: c.ws.send("not json"), 1002)
    await closed_with(lambda c: c.ws.send(b"\x00\x01"), 1003)
    await closed_with(lambda c: c.ws.send("y" * 60_000), 1009)
    # Frames only a hand-made client sends: an unmasked one (RFC 6455 5.1: the server closes),
    # and a continuation with no message to continue.
    mask = b"\x01\x02\x03\x04"
    for frame in (bytes([0x81, 0x02]) + b"{}", bytes([0x80, 0x82]) + mask + bytes(b ^ m for b, m in zip(b"{}", mask))):
        raw = await RawSocket.open(base)
        raw.writer.write(frame)
        reply = await asyncio.wait_for(raw.frame(), 10)
        check(reply is not None and reply[0] == 0x8 and struct.unpack("!H", reply[1][:2])[0] == 1002,
              f"close 1002 expected for {frame!r}, got {reply}")
        raw.writer.close()
    # The server keeps serving.
    a = await Client.open(base)
    await a.ok("g", {"p": "/", "q": {}})
    await a.close()


async def random_differential(base):
    """Random writes against live listens: after every acknowledged write, each listen's local
    copy (built only from pushes) equals a fresh one-shot read of the same location and query."""
    import random
    rng = random.Random(20261124)
    writer = await Client.open(base)
    reader = await Client.open(base)
    keys = [f"k{i}" for i in range(12)]
    await writer.ok("p", {"p": "/diff", "d": {k: {"n": rng.randint(0, 9), "s": rng.choice("abc")} for k in keys[:6]}})
    queries = [None, {"l": 3, "vf": "r", "i": "n"}, {"l": 2, "vf": "l", "i": ".key"}, {"sp": 3, "ep": 6, "i": "n"},
               {"sp": "b", "i": "s", "l": 4, "vf": "l"}, {"ep": "k5", "i": ".key", "l": 3, "vf": "r"}, {"l": 5, "vf": "l", "i": ".value"}]
    local = {}
    for tag, query in enumerate(queries, start=1):
        body = {"p": "/diff", "h": ""}
        if query is not None:
            body |= {"q": query, "t": tag}
        pushes, _ = await reader.ok("q", body)
        local[tag] = None
        for push in pushes:
            local[tag] = apply_push(local[tag], "/diff", push["b"] | {"a": push["a"]})
    for step in range(150):
        key = rng.choice(keys)
        kind = rng.random()
        if kind < 0.4:
            action, body = "p", {"p": f"/diff/{key}/n", "d": rng.randint(0, 9)}
        elif kind < 0.6:
            action, body = "p", {"p": f"/diff/{key}", "d": None}
        elif kind < 0.8:
            other = rng.choice(keys)
            action, body = "m", {"p": "/diff", "d": {f"{key}/s": rng.choice("abcd"), f"{other}/n": rng.randint(0, 9)}}
        else:
            action, body = "p", {"p": f"/diff/{key}", "d": {"n": rng.randint(0, 9), "s": rng.choice("abc")}}
        await writer.ok(action, body)
        # The reader's pushes for this write come before its answer to the get below.
        for tag, query in enumerate(queries, start=1):
            pushes, expected = await reader.ok("g", {"p": "/diff", "q": query or {}})
            for push in pushes:
                target = push["b"].get("t", 1)
                local[target] = apply_push(local[target], "/diff", push["b"] | {"a": push["a"]})
            check(local[tag] == expected, f"step {step} ({action} {body}), listen {query}: live {local[tag]} != read {expected}")
    await writer.close()
    await reader.close()


async def vanish_mid_frame(base):
    """A client that announces three frames, sends one and drops: nothing of it is applied, and
    the server serves others."""
    a = await Client.open(base)
    await a.ws.send("3")
    await a.ws.send('{"t":"d","d":{"r":1,"a":"p","b":{"p":"/half","d":"' + "x" * 16000)
    a.ws.transport.abort()
    b = await Client.open(base)
    _, value = await b.ok("g", {"p": "/half", "q": {}})
    check(value is None, f"a message cut short writes nothing: {value!r}")
    await b.close()


def scrape_metrics(base, token=None):
    """GET /.metrics, parsed with prometheus_client's own parser: {(sample name, labels): value}."""
    from prometheus_client.parser import text_string_to_metric_families
    request = urllib.request.Request(base.replace("ws://", "http://") + "/.metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as reply:
        check(reply.headers["Content-Type"].startswith("text/plain; version=0.0.4"), f"content type {reply.headers['Content-Type']}")
        text = reply.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


async def metrics(base):
    """GET /.metrics counts SDK connections (opened and open) and their requests by action."""
    before = scrape_metrics(base)
    check(before[("canopy_websocket_connections_opened_total", ())] == 0, f"no connection yet: {before}")
    reader = await Client.open(base)
    writer = await Client.open(base)
    await reader.ok("q", {"p": "/m", "h": ""})
    await writer.ok("p", {"p": "/m/x", "d": 1})
    await writer.ok("m", {"p": "/m", "d": {"y": 2, "z/w": 3}})
    await writer.ok("g", {"p": "/m", "q": {}})
    await writer.ok("o", {"p": "/m/gone", "d": True})
    after = scrape_metrics(base)
    check(after[("canopy_websocket_connections_opened_total", ())] == 2, f"two opened: {after}")
    check(after[("canopy_websocket_connections", ())] == 2, f"two open: {after}")
    for action, count in (("listen", 1), ("put", 1), ("merge", 1), ("get", 1), ("on_disconnect", 1), ("auth", 0)):
        value = after[("canopy_websocket_requests_total", (("action", action),))]
        check(value == count, f"{action}: {value} requests counted, {count} sent")
    await writer.close()
    for _ in range(100):
        if scrape_metrics(base)[("canopy_websocket_connections", ())] == 1:
            break
        await asyncio.sleep(0.05)
    else:
        fail("the closed connection is still counted as open")
    await reader.close()


async def slow_reader(base):
    """A client that listens and never reads is disconnected past the buffer bound; another
    listener keeps receiving every write."""
    slow = await Client.open(base)
    await slow.ok("q", {"p": "/flood", "h": ""})
    fast = await Client.open(base)
    await fast.ok("q", {"p": "/flood", "h": ""})
    slow.ws.transport.pause_reading()
    writer = await Client.open(base)
    payload = "y" * 60_000
    received = 0
    for i in range(400):  # 24 MB in all: past the 4 MB bound and the kernel's socket buffers
        await writer.ok("p", {"p": f"/flood/n{i}", "d": payload})
        push = await fast.push(timeout=10)
        check(split_path(push["b"]["p"]) == ["flood", f"n{i}"], f"the fast listener sees write {i}: {push['b']['p']}")
        received += 1
    check(received == 400, "every write reached the reading client")
    slow.ws.transport.resume_reading()
    try:
        while True:
            await slow.recv(10)
    except ConnectionClosed:
        pass
    except asyncio.TimeoutError:
        fail("the client that did not read was not disconnected")
    cut = scrape_metrics(base)[("canopy_slow_clients_total", (("transport", "websocket"),))]
    check(cut == 1, f"one slow client cut off in the metrics, not {cut}")
    for c in (fast, writer):
        await c.close()


def http_put(base, path, value, ns="wire"):
    """PUT `value` at `path` over REST (quietly: print=silent)."""
    url = base.replace("ws://", "http://") + f"{path}.json?ns={ns}&print=silent"
    request = urllib.request.Request(url, data=json.dumps(value, separators=(",", ":")).encode(), method="PUT")
    with urllib.request.urlopen(request, timeout=60) as reply:
        check(reply.status == 204, f"PUT {path}: {reply.status}")


def big_value(children=150_000, filler=160):
    """About 30 MB of JSON in 150,000 children."""
    return {f"c{1_000_000 + i}": {"n": i, "t": "x" * filler} for i in range(children)}


async def wait_for_slow_clients(base, count, transport="websocket"):
    """Waits (a hang guard of 40 s) until `count` slow clients were cut off."""
    for _ in range(2000):
        if scrape_metrics(base).get(("canopy_slow_clients_total", (("transport", transport),))) == count:
            return
        await asyncio.sleep(0.02)
    fail(f"{count} slow clients expected to be cut off")


async def large_listen(base):
    """A listen on 30 MB (150,000 children) gets the exact value in split frames, then the writes
    made while it was going out, in order; a read of it gets it too."""
    value = big_value()
    http_put(base, "/big", value)
    a = await Client.open(base)
    r = await a.request("q", {"p": "/big", "h": ""})
    # Writes the server takes after the listen (the same connection's requests are handled in
    # order), while the value goes out: their pushes follow it.
    writes = [await a.request("p", {"p": "/big/c1000007/n", "d": 100 + i}) for i in range(3)]
    pushes, body = await a.response(r, timeout=60)
    check(body["s"] == "ok", f"the listen is answered ok: {body}")
    check(len(pushes) == 1 and pushes[0]["a"] == "d" and split_path(pushes[0]["b"]["p"]) == ["big"],
          f"one initial put before the answer: {[p['b']['p'] for p in pushes]}")
    check(pushes[0]["b"]["d"] == value, "the initial value is the data written")
    answered, seen = [], []
    while len(answered) < 3 or len(seen) < 3:
        message = (await a.recv(30))["d"]
        if "r" in message:
            check(message["b"]["s"] == "ok", f"the write is answered ok: {message}")
            answered.append(message["r"])
        else:
            check(split_path(message["b"]["p"]) == ["big", "c1000007", "n"], f"a push of the write: {message}")
            seen.append(message["b"]["d"])
    check(answered == writes and seen == [100, 101, 102], f"the writes after the value, in order: {answered} {seen}")
    r = await a.request("g", {"p": "/big", "q": {}})
    _, body = await a.response(r, timeout=60)
    value["c1000007"]["n"] = 102
    check(body["s"] == "ok" and body["d"] == value, "a read of the location gets it whole")
    await a.close()


async def stalled_large_listen(base):
    """(Slow-client timeout 3 s.) A client that stops reading half-way through a large initial
    value is cut off; another listener gets the value whole and keeps receiving."""
    value = big_value()
    http_put(base, "/big", value)
    slow = await Client.open(base)
    await slow.request("q", {"p": "/big", "h": ""})
    count = await asyncio.wait_for(slow.ws.recv(), 30)
    check(count.isdigit() and int(count) > 100, f"a count frame first: {count[:20]!r}")
    for _ in range(10):
        await asyncio.wait_for(slow.ws.recv(), 30)
    slow.ws.transport.pause_reading()
    fast = await Client.open(base)
    r = await fast.request("q", {"p": "/big", "h": ""})
    pushes, body = await fast.response(r, timeout=60)
    check(body["s"] == "ok" and len(pushes) == 1 and pushes[0]["b"]["d"] == value, "the reading client gets the value")
    await wait_for_slow_clients(base, 1)
    http_put(base, "/big/c1000001/n", 7)
    push = await fast.push(timeout=30)
    check(split_path(push["b"]["p"]) == ["big", "c1000001", "n"] and push["b"]["d"] == 7, f"the reader keeps going: {push}")
    slow.ws.transport.resume_reading()
    try:
        while True:
            await asyncio.wait_for(slow.ws.recv(), 30)
    except ConnectionClosed:
        pass
    await fast.close()


async def too_big(base):
    """(Largest answer 1 MB.) A listen or read of more is refused with too_big, naming the limit;
    a smaller part of it is served."""
    http_put(base, "/huge", big_value(children=10_000))
    a = await Client.open(base)
    for action, body in (("q", {"p": "/huge", "h": ""}), ("g", {"p": "/huge", "q": {}})):
        pushes, answer = await a.call(action, body)
        check(answer["s"] == "too_big" and "(1 MB)" in answer["d"], f"{action} refused: {answer}")
        check(pushes == [], f"no data for a refused {action}: {pushes}")
    _, data = await a.ok("g", {"p": "/huge/c1000001", "q": {}})
    check(data == {"n": 1, "t": "x" * 160}, f"a part is served: {data}")
    await a.close()


async def many_sockets(base):
    """Hundreds of connections at once each get their own hello and answers."""
    clients = await asyncio.gather(*(Client.open(base) for _ in range(300)))
    check(len({c.hello["s"] for c in clients}) == 300, "unique session ids")
    answers = await asyncio.gather(*(c.ok("g", {"p": "/", "q": {"l": 1, "vf": "l"}}) for c in clients))
    check(len(answers) == 300, "every connection answered")
    await asyncio.gather(*(c.close() for c in clients))


class RawSocket:
    """A WebSocket client that answers nothing on its own (no pongs): the handshake and frames by
    hand, over asyncio streams."""

    @classmethod
    async def open(cls, base, ns="wire"):
        host, port = base.removeprefix("ws://").split(":")
        self = cls()
        self.reader, self.writer = await asyncio.open_connection(host, int(port))
        key = base64.b64encode(b"0123456789abcdef").decode()
        self.writer.write((f"GET /.ws?v=5&ns={ns} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        check(head.startswith(b"HTTP/1.1 101"), f"upgraded: {head[:40]!r}")
        opcode, hello = await self.frame()
        check(opcode == 1 and json.loads(hello)["d"]["t"] == "h", f"first frame is the hello: {opcode} {hello!r}")
        return self

    async def frame(self):
        """The next frame from the server: (opcode, payload); None at the end of the stream."""
        try:
            first, second = await self.reader.readexactly(2)
        except asyncio.IncompleteReadError:
            return None
        length = second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
        check(second & 0x80 == 0, "server frames are not masked")
        return first & 0x0F, await self.reader.readexactly(length)

    def send(self, message):
        data, mask = json.dumps(message).encode(), b"\x01\x02\x03\x04"
        check(len(data) < 126, "short frames only")
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.writer.write(bytes([0x81, 0x80 | len(data)]) + mask + masked)


async def liveness(base):
    """(Server pings after each 1 s of silence.) A client that neither sends nor answers pings is
    pinged, then closed, and its onDisconnect write runs; one whose WebSocket stack answers
    pings stays connected through many intervals without sending anything itself."""
    watcher = await Client.open(base)
    await watcher.ok("p", {"p": "/alive/raw", "d": True})
    await watcher.ok("q", {"p": "/alive", "h": ""})
    raw = await RawSocket.open(base)
    raw.send({"t": "d", "d": {"r": 1, "a": "o", "b": {"p": "/alive/raw", "d": False}}})
    opcodes = []
    while (frame := await asyncio.wait_for(raw.frame(), 10)) is not None:
        opcodes.append(frame[0])
    check(0x9 in opcodes, f"the silent client was pinged before it was closed: opcodes {opcodes}")
    push = await watcher.push(timeout=10)
    check(split_path(push["b"]["p"]) == ["alive", "raw"] and push["b"]["d"] is False,
          f"the closed client's onDisconnect write ran: {push}")
    quiet = await Client.open(base)  # websockets answers pings; it sends none of its own
    await asyncio.sleep(4)  # 4 intervals with nothing sent by the client itself
    _, value = await quiet.ok("g", {"p": "/alive/raw", "q": {}})
    check(value is False, f"the client that answers pings is still served: {value!r}")
    await quiet.close()
    await watcher.close()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_token(claims, secret=b"canopy-test-secret-of-at-least-32-bytes"):
    """A user token as an auth service would sign it (HS256, the server's --jwt-secret-file)."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}"


def user_token(uid, expires_in=3600, secret=b"canopy-test-secret-of-at-least-32-bytes"):
    now = int(time.time())
    return hs256_token({"sub": uid, "iat": now, "exp": now + expires_in, "email": f"{uid}@example.com"}, secret)


async def rest_put_rules(base, document, token="s3cret"):
    """Replaces the rules over REST, as the administrator."""
    url = base.replace("ws://", "http://") + "/.settings/rules.json?ns=wire"
    request = urllib.request.Request(url, data=document.encode(), method="PUT",
                                     headers={"Authorization": f"Bearer {token}"})
    reply = await asyncio.to_thread(urllib.request.urlopen, request, timeout=10)
    check(reply.status == 200, f"rules replaced: {reply.status}")


async def expect_revoked(client, path, timeout=5):
    """Reads pushes until the listen at `path` is revoked (`c`)."""
    while True:
        push = await client.push(timeout)
        if push["a"] == "c":
            check(push["b"]["p"].strip("/") == path.strip("/"), f"revoked listen at {path}: {push}")
            return push


async def security_rules(base):
    """A server with rules and user tokens (HS256): per-user reads and writes, validation,
    query-based rules, all-or-nothing updates, onDisconnect judged, listens revoked by new
    rules and by unauth, expired and forged tokens refused."""
    admin = await Client.open(base)
    await admin.ok("gauth", {"cred": "s3cret"})
    await admin.ok("p", {"p": "/", "d": {
        "users": {"alice": {"name": "A"}, "bob": {"name": "B"}}, "public": {"x": 1},
        "posts": {"p1": {"author": "alice"}, "p2": {"author": "bob"}}}})
    alice = await Client.open(base)
    await alice.ok("s", {"c": {"sdk.js.12-18-0": 1}})
    await alice.ok("auth", {"cred": user_token("alice")})
    pushes, _ = await alice.ok("q", {"p": "/users/alice", "h": ""})
    check(pushes and pushes[0]["b"]["d"] == {"name": "A"}, f"alice reads her own data: {pushes}")
    for action, body in (("q", {"p": "/users/bob", "h": ""}), ("g", {"p": "/users/bob", "q": {}}),
                         ("q", {"p": "/posts", "h": ""}), ("g", {"p": "/", "q": {}})):
        pushes, denied = await alice.call(action, body)
        check(denied["s"] == "permission_denied" and not pushes, f"{action} {body['p']}: {denied} {pushes}")
    pushes, _ = await alice.ok("q", {"p": "/posts", "q": {"i": "author", "sp": "alice", "ep": "alice"}, "t": 1, "h": ""})
    check(pushes[0]["b"]["d"] == {"p1": {"author": "alice"}}, f"the query the rules allow: {pushes}")
    _, denied = await alice.call("q", {"p": "/posts", "q": {"i": "author", "sp": "bob", "ep": "bob"}, "t": 2, "h": ""})
    check(denied["s"] == "permission_denied", f"another user's query: {denied}")
    await alice.ok("p", {"p": "/users/alice/name", "d": "A2"})
    refused = [("p", {"p": "/users/alice/name", "d": 5}), ("p", {"p": "/users/bob/name", "d": "X"}),
               ("m", {"p": "/users", "d": {"alice/name": "A3", "bob/name": "X"}}),
               ("o", {"p": "/users/bob/name", "d": "gone"}), ("p", {"p": "/public/x", "d": 2})]
    for action, body in refused:
        _, denied = await alice.call(action, body)
        check(denied["s"] == "permission_denied", f"{action} {body}: {denied}")
    _, data = await admin.ok("g", {"p": "/users", "q": {}})
    check(data == {"alice": {"name": "A2"}, "bob": {"name": "B"}}, f"refused writes changed nothing: {data}")
    pushes, _ = await alice.ok("q", {"p": "/public", "h": ""})
    check(pushes[0]["b"]["d"] == {"x": 1}, f"public data: {pushes}")
    # New rules without public reads: that listen is revoked, the others stay.
    await rest_put_rules(base, RULES_WITHOUT_PUBLIC)
    await expect_revoked(alice, "/public")
    await admin.ok("p", {"p": "/users/alice/name", "d": "A4"})
    push = await alice.push()
    check(push["a"] == "d" and push["b"]["d"] == "A4", f"her own listen goes on: {push}")
    # Signing out revokes what needed the sign-in.
    pushes, _ = await alice.ok("unauth", {})
    revoked = sorted((p["a"], p["b"]["p"].strip("/"), "q" in p["b"]) for p in pushes)
    check(revoked == [("c", "posts", True), ("c", "users/alice", False)],
          f"both listens that needed the sign-in are revoked, before unauth's answer: {pushes}")
    _, denied = await alice.call("g", {"p": "/users/alice", "q": {}})
    check(denied["s"] == "permission_denied", f"after unauth: {denied}")
    # Expired, forged and unverifiable tokens.
    for token, status in ((user_token("alice", expires_in=-600), "expired_token"),
                          (user_token("alice", secret=b"wrong"), "invalid_token"), ("owner", "invalid_token"),
                          ("not-a-jwt", "invalid_token")):
        _, refused_auth = await alice.call("auth", {"cred": token})
        check(refused_auth["s"] == status and isinstance(refused_auth["d"], str), f"{token[:12]}: {refused_auth}")
        check("alice" not in refused_auth["d"], "the reason does not echo the token")
    _, denied = await alice.call("g", {"p": "/users/alice", "q": {}})
    check(denied["s"] == "permission_denied", f"a refused auth leaves the connection unauthenticated: {denied}")
    # A token that expires while the connection is idle: the server says so (`ac`) and revokes
    # the listen that needed it, without waiting for a request.
    # (5 s of validity: enough for the auth and the listen on a loaded machine.)
    await alice.ok("auth", {"cred": user_token("alice", expires_in=5)})
    await alice.ok("q", {"p": "/users/alice", "h": ""})
    revoked_auth = await alice.push(timeout=20)
    check(revoked_auth["a"] == "ac" and revoked_auth["b"]["s"] == "expired_token", f"the expiry is announced: {revoked_auth}")
    await expect_revoked(alice, "/users/alice")
    _, denied = await alice.call("g", {"p": "/users/alice", "q": {}})
    check(denied["s"] == "permission_denied", f"after the expiry, unauthenticated: {denied}")
    # A user's onDisconnect is judged when it runs, as that user.
    bob = await Client.open(base)
    await bob.ok("auth", {"cred": user_token("bob")})
    await bob.ok("o", {"p": "/users/bob/name", "d": "offline"})
    bob.ws.transport.abort()
    deadline = time.time() + 10
    while True:
        _, data = await admin.ok("g", {"p": "/users/bob/name", "q": {}})
        if data == "offline":
            break
        check(time.time() < deadline, f"bob's onDisconnect ran: {data}")
        await asyncio.sleep(0.05)
    await alice.close()
    await admin.close()
    # The refusals above are counted, for the administrator only.
    denied = scrape_metrics(base, token="s3cret")[("canopy_websocket_permission_denied_total", ())]
    check(denied >= 5, f"the refused listens, reads and writes are counted: {denied}")


RULES_WITHOUT_PUBLIC = """{
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null && auth.uid === $uid",
        ".write": "auth != null && auth.uid === $uid",
        "name": {".validate": "newData.isString()"}
      }
    },
    "posts": {".read": "auth != null && query.orderByChild === 'author' && query.equalTo === auth.uid"}
  }
}"""


async def script_replay(base, script_path, out_path):
    """Replays a write script (written by the Swift differential test) against live listens, one
    per query, and records each listen's data, built only from pushes, after every write: the
    test compares it with what the embedded engine's observers saw for the same script."""
    with open(script_path) as f:
        script = json.load(f)
    writer = await Client.open(base, ns="replay")
    reader = await Client.open(base, ns="replay")
    await writer.ok("p", {"p": script["path"], "d": script["initial"]})
    queries = script["queries"]
    local = {}
    for tag, query in enumerate(queries, start=1):
        body = {"p": script["path"], "h": ""}
        if query is not None:
            body |= {"q": query, "t": tag}
        pushes, _ = await reader.ok("q", body)
        local[tag] = None
        for push in pushes:
            local[push["b"].get("t", 1)] = apply_push(local[push["b"].get("t", 1)], script["path"], push["b"] | {"a": push["a"]})
    states = []
    for op in script["ops"]:
        await writer.ok(op["a"], {"p": op["p"], "d": op["d"]})
        # Every push the write caused reaches the reader before its answer to this get.
        pushes, _ = await reader.ok("g", {"p": script["path"], "q": {}})
        for push in pushes:
            target = push["b"].get("t", 1)
            local[target] = apply_push(local[target], script["path"], push["b"] | {"a": push["a"]})
        states.append([local[tag] for tag in range(1, len(queries) + 1)])
    with open(out_path, "w") as f:
        json.dump(states, f)
    await writer.close()
    await reader.close()


SCENARIOS = {f.__name__: f for f in (handshake, captured_conversation, default_listen, large_messages, transactions, trigger_write,
                                      on_disconnect, reconnect_with_ls, queries_and_gets, admin_token, bad_frames, metrics,
                                      random_differential, vanish_mid_frame, slow_reader, many_sockets, security_rules, liveness,
                                      large_listen, stalled_large_listen, too_big, script_replay)}


def main():
    base, name = sys.argv[1], sys.argv[2]
    try:
        asyncio.run(asyncio.wait_for(SCENARIOS[name](base, *sys.argv[3:]), 240))
    except Exception as error:  # noqa: BLE001 - report any failure with its scenario
        print(f"wire: {name} FAILED: {type(error).__name__}: {error}")
        sys.exit(1)
    print(f"wire: {name} ok")


if __name__ == "__main__":
    main()
