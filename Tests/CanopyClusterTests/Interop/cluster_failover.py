#!/usr/bin/env python3
"""Three `canopy serve --cluster` nodes on 127.0.0.1-3, clients writing through all of them, and the
leader of their namespace SIGKILLed again and again.

Usage: cluster_failover.py CANOPY CLUSTER_URL PASSWORD_FILE PORT KILLS [RESTART_COMMAND]   (PORT 0: a free one)

With RESTART_COMMAND (a shell command that restarts the cluster's PostgreSQL), the fault is that
restart instead of a kill: writes stall, then resume, and nothing acknowledged is lost.

Clients: firebase-admin over REST (plain sets, and transactions that move money between two accounts,
each marked so that a retried one applies once), and a client of the SDKs' WebSocket protocol that
follows the server's redirect and re-sends its unacknowledged writes after each reconnect, as the SDKs
do. At the end every acknowledged write must be present, the accounts' sum kept, and each marked
transfer applied exactly once. Prints "cluster: failover ok" and one JSON line of measurements.
"""
import asyncio
import json
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import firebase_admin
from firebase_admin import db
from websockets.asyncio.client import connect

CANOPY, CLUSTER, PASSWORD_FILE, PORT, KILLS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
RESTART = sys.argv[6] if len(sys.argv) > 6 else None
if PORT == 0:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        PORT = probe.getsockname()[1]
NS = "bank"
HOSTS = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
DEADLINE = time.monotonic() + 240  # the whole run's hang guard


def check(condition, message):
    if not condition:
        raise AssertionError(message)


class Node:
    def __init__(self, host):
        self.host = host
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [CANOPY, "serve", "--cluster", CLUSTER, "--cluster-password-file", PASSWORD_FILE,
             "--advertise", f"http://{self.host}:{PORT}", "--host", self.host, "--port", str(PORT), "--log-level", "notice"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=open(f"/tmp/canopy-cluster-{self.host}.log", "ab"))
        line = self.process.stdout.readline().decode()
        check("serving node" in line, f"{self.host}: canopy serve did not start: {line!r}")
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


nodes = [Node(host) for host in HOSTS]
acks = []  # (time, what) of every acknowledged write
acks_lock = threading.Lock()
stop = threading.Event()


def acked(what):
    with acks_lock:
        acks.append((time.monotonic(), what))


def leader():
    """The host that leads the namespace now, asking a node that answers (307 names another)."""
    for node in random.sample(nodes, len(nodes)):
        request = urllib.request.Request(f"http://{node.host}:{PORT}/.json?ns={NS}&shallow=true")
        opener = urllib.request.build_opener(NoRedirect())
        try:
            opener.open(request, timeout=10)
            return node
        except urllib.error.HTTPError as error:
            if error.code == 307:
                location = error.headers["Location"]
                return next(n for n in nodes if f"//{n.host}:" in location)
        except OSError:
            continue
    return None


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def apps():
    return [firebase_admin.initialize_app(options={"databaseURL": f"http://{h}:{PORT}?ns={NS}"}, name=f"{h}-{random.random()}")
            for h in HOSTS]


def until_done(action):
    """Runs `action(app)` on a random node until it succeeds (a killed node refuses, a redirect is
    followed by the client); returns False when the run stops first."""
    while not stop.is_set() and time.monotonic() < DEADLINE:
        try:
            action(random.choice(rest_apps))
            return True
        except Exception:  # noqa: BLE001 - any failure: the write is retried, as a client would
            time.sleep(0.05)
    return False


def rest_writer(results):
    i = 0
    while not stop.is_set():
        i += 1
        if until_done(lambda app: db.reference(f"rest/k{i}", app).set(i)):
            results.append(i)
            acked("rest")


def transfers(results):
    i = 0
    while not stop.is_set():
        i += 1
        direction = random.choice(["ab", "ba"])
        marker = f"t{i}"

        def move(app):
            def fn(bank):
                bank = bank or {}
                marks = bank.get("transfers") or {}
                if marker in marks:  # applied by an attempt whose answer was lost
                    return bank
                src, dst = direction[0], direction[1]
                bank[src] = bank.get(src, 100) - 1
                bank[dst] = bank.get(dst, 100) + 1
                marks[marker] = direction
                bank["transfers"] = marks
                return bank
            db.reference("bank", app).transaction(fn)

        if until_done(move):
            results.append((marker, direction))
            acked("transfer")


async def ws_writer(results):
    """Our SDK-protocol client: puts `ws/k<i>` in order, re-sending the unacknowledged ones after a
    reconnect; follows the server's redirect (`r`) instead of a hello."""
    pending = []  # (i) not yet acknowledged, in order
    next_i = 0
    redirects = 0
    host = random.choice(HOSTS) + f":{PORT}"
    while not stop.is_set() and time.monotonic() < DEADLINE:
        try:
            async with connect(f"ws://{host}/.ws?v=5&ns={NS}", open_timeout=10, ping_interval=None) as ws:
                first = json.loads(await asyncio.wait_for(ws.recv(), 10))
                check(first.get("t") == "c", f"a control message first: {first}")
                if first["d"]["t"] == "r":
                    host = first["d"]["d"]
                    redirects += 1
                    continue
                check(first["d"]["t"] == "h", f"a hello or a redirect: {first}")
                r = 0
                while not stop.is_set():
                    if len(pending) < 8:
                        next_i += 1
                        pending.append(next_i)
                    # One at a time, in order: a put is acknowledged before the next is sent.
                    i = pending[0]
                    r += 1
                    await ws.send(json.dumps({"t": "d", "d": {"r": r, "a": "p", "b": {"p": f"/ws/k{i}", "d": i}}}))
                    while True:
                        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                        if message.get("t") == "d" and message["d"].get("r") == r:
                            break
                    status = message["d"]["b"]["s"]
                    if status != "ok":
                        raise ConnectionError(f"put refused: {status}")
                    pending.pop(0)
                    results.append(i)
                    acked("ws")
        except Exception:  # noqa: BLE001 - the node died or refused: reconnect elsewhere
            host = random.choice(HOSTS) + f":{PORT}"
            await asyncio.sleep(0.05)
    results.append(("redirects", redirects))


async def ws_recv(ws, timeout):
    """One message, reassembled when the server split it (a count, then the pieces)."""
    first = await asyncio.wait_for(ws.recv(), timeout)
    if len(first) <= 6 and first.isdigit():
        first = "".join([await asyncio.wait_for(ws.recv(), timeout) for _ in range(int(first))])
    return json.loads(first)


async def ws_listener(view, problems):
    """An SDK-protocol listener of `ws`, reconnecting (and following redirects) like the writer.
    The WebSocket writer puts k1, k2, … one at a time, so every state the listener shows must hold
    exactly k1…kn (a prefix of the writer's log: no gap), each with its own number."""
    host = random.choice(HOSTS) + f":{PORT}"
    while not stop.is_set() and time.monotonic() < DEADLINE:
        try:
            async with connect(f"ws://{host}/.ws?v=5&ns={NS}", open_timeout=10, ping_interval=None, max_size=None) as ws:
                first = await ws_recv(ws, 10)
                if first["d"]["t"] == "r":
                    host = first["d"]["d"]
                    continue
                await ws.send(json.dumps({"t": "d", "d": {"r": 1, "a": "q", "b": {"p": "/ws", "h": ""}}}))
                local = {}
                recent = [f"connected to {host}"]
                while not stop.is_set():
                    try:
                        message = await ws_recv(ws, 0.5)
                    except asyncio.TimeoutError:
                        continue
                    if message.get("t") == "c" and message["d"].get("t") == "r":
                        host = message["d"]["d"]  # led elsewhere now: follow, as the SDKs do
                        break
                    if message.get("t") == "d" and message["d"].get("r") == 1 and message["d"]["b"].get("s") != "ok":
                        problems.append(f"a listen failed (an SDK would cancel its listener): {message}")
                    if message.get("t") != "d" or message["d"].get("a") not in ("d", "m"):
                        continue
                    action, body = message["d"]["a"], message["d"]["b"]
                    recent = (recent + [f"{action} {body['p']} {len(body['d']) if isinstance(body['d'], dict) else body['d']}"])[-8:]
                    path = body["p"].strip("/").split("/")
                    data = body["d"]
                    if path == ["ws"] and action == "d":
                        local = dict(data or {})
                    elif path == ["ws"]:
                        local.update(data)
                    elif len(path) == 2 and action == "d":
                        local[path[1]] = data
                    # A snapshot is checked whole; a push by what it adds (keys k1…kn hold n keys).
                    changed = local if action == "d" and path == ["ws"] else (data if path == ["ws"] else {path[1]: data})
                    if any(value != int(key[1:]) for key, value in changed.items()) or \
                            (local and max(int(k[1:]) for k in changed or local) > len(local)):
                        problems.append(f"the listener saw a state that is not a prefix of the writes: {len(local)} keys, "
                                        f"{str(changed)[:80]}; its last messages: {recent}")
                    view["state"] = local
        except Exception:  # noqa: BLE001 - the node died: reconnect elsewhere
            host = random.choice(HOSTS) + f":{PORT}"
            await asyncio.sleep(0.05)


async def ws_request(ws, r, action, body):
    await ws.send(json.dumps({"t": "d", "d": {"r": r, "a": action, "b": body}}))
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if message.get("t") == "d" and message["d"].get("r") == r:
            check(message["d"]["b"]["s"] == "ok", f"{action} {body}: {message}")
            return


async def register_on_disconnect(host):
    """Connects to the leader (following its redirect), registers onDisconnect writes, and keeps
    the connection open: the caller kills the leader under it."""
    for _ in range(5):
        ws = await connect(f"ws://{host}/.ws?v=5&ns={NS}", open_timeout=10, ping_interval=None)
        first = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if first["d"]["t"] == "r":
            host = first["d"]["d"]
            await ws.close()
            continue
        await ws_request(ws, 1, "p", {"p": "/od/state", "d": "here"})
        await ws_request(ws, 2, "o", {"p": "/od/state", "d": "gone"})
        await ws_request(ws, 3, "om", {"p": "/od", "d": {"count": {".sv": {"increment": 1}}}})
        await ws_request(ws, 4, "o", {"p": "/od/cancelled", "d": "must not run"})
        await ws_request(ws, 5, "oc", {"p": "/od/cancelled"})
        return ws
    raise AssertionError("redirected too often")


def on_disconnect_after_kills():
    """A client's onDisconnect writes, registered on a leader that is then killed, run once on
    the next leader (and not again on the one after), and a cancelled one never runs."""
    victim = leader()
    loop = asyncio.new_event_loop()
    ws = loop.run_until_complete(register_on_disconnect(f"{victim.host}:{PORT}"))
    victim.kill()
    victim.start()
    od = None
    for _ in range(300):
        try:
            od = db.reference("od", random.choice(rest_apps)).get()
            if od and od.get("state") == "gone":
                break
        except Exception:  # noqa: BLE001
            pass
        time.sleep(0.1)
    check(od == {"state": "gone", "count": 1}, f"the onDisconnect writes ran once on the new leader: {od}")
    second = leader()
    second.kill()
    second.start()
    for _ in range(300):
        try:
            db.reference("probe", random.choice(rest_apps)).set(1)
            break
        except Exception:  # noqa: BLE001
            time.sleep(0.1)
    again = db.reference("od", random.choice(rest_apps)).get()
    check(again == {"state": "gone", "count": 1}, f"the onDisconnect writes did not run again: {again}")
    try:
        loop.run_until_complete(ws.close())
    except Exception:  # noqa: BLE001 - its server is dead
        pass
    loop.close()


def main():
    global rest_apps
    for node in nodes:
        node.start()
    rest_apps = apps()
    db.reference("/", rest_apps[0]).set({"bank": {"a": 100, "b": 100}})
    rest_results, transfer_results, ws_results = [], [], []
    listener_view, listener_problems = {}, []
    threads = [threading.Thread(target=rest_writer, args=(rest_results,)),
               threading.Thread(target=transfers, args=(transfer_results,)),
               threading.Thread(target=lambda: asyncio.run(ws_writer(ws_results))),
               threading.Thread(target=lambda: asyncio.run(ws_listener(listener_view, listener_problems)))]
    for thread in threads:
        thread.start()
    kill_times = []
    try:
        for _ in range(KILLS):
            time.sleep(random.uniform(0.8, 1.6))
            if RESTART:
                kill_times.append(time.monotonic())
                subprocess.run(RESTART, shell=True, check=True)
                continue
            victim = leader()
            check(victim is not None, "no node answers")
            kill_times.append(time.monotonic())
            victim.kill()
            time.sleep(random.uniform(0.2, 0.6))
            victim.start()
        time.sleep(1.5)
        # The listener catches up with everything the writer had acknowledged.
        acked_ws = [i for i in ws_results if isinstance(i, int)]
        for _ in range(200):
            if acked_ws and all(listener_view.get("state", {}).get(f"k{i}") == i for i in acked_ws):
                break
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    check(not any(t.is_alive() for t in threads), "a client hung")
    check(not listener_problems, listener_problems[:3])
    shown = listener_view.get("state", {})
    unseen = [i for i in acked_ws if shown.get(f"k{i}") != i]
    check(acked_ws and not unseen,
          f"the listener, reconnected after the kills, shows every acknowledged WebSocket write: {len(unseen)} of {len(acked_ws)} "
          f"missing ({unseen[:3]}…{unseen[-3:]}), it shows {len(shown)}")
    if not RESTART:
        on_disconnect_after_kills()

    final = None
    for _ in range(100):
        try:
            final = db.reference("/", random.choice(rest_apps)).get()
            break
        except Exception:  # noqa: BLE001
            time.sleep(0.1)
    check(final is not None, "the final read never succeeded")
    for node in nodes:
        node.stop()

    rest = final.get("rest") or {}
    ws = final.get("ws") or {}
    bank = final["bank"]
    missing_rest = [i for i in rest_results if rest.get(f"k{i}") != i]
    check(not missing_rest, f"acknowledged REST writes lost: {missing_rest[:10]}")
    ws_acked = [i for i in ws_results if isinstance(i, int)]
    missing_ws = [i for i in ws_acked if ws.get(f"k{i}") != i]
    check(not missing_ws, f"acknowledged WebSocket writes lost: {missing_ws[:10]}")
    check(ws_acked == sorted(ws_acked) and len(set(ws_acked)) == len(ws_acked), "WebSocket writes acknowledged in order, once")
    marks = bank.get("transfers") or {}
    lost = [m for m, _ in transfer_results if m not in marks]
    check(not lost, f"acknowledged transfers lost: {lost[:10]}")
    check(bank["a"] + bank["b"] == 200, f"the accounts' sum is kept: {bank['a']} + {bank['b']}")
    moved = sum(1 if d == "ab" else -1 for d in marks.values())
    check(bank["a"] == 100 - moved and bank["b"] == 100 + moved, f"each marked transfer applied once: {bank['a']}, {bank['b']}, {moved}")
    check(len(rest_results) > KILLS and len(ws_acked) > KILLS and len(transfer_results) > 0, "the clients made progress")

    # Failover time: from each kill to the first write acknowledged after it.
    with acks_lock:
        times = sorted(t for t, _ in acks)
    gaps = []
    for killed in kill_times:
        after = [t for t in times if t > killed]
        check(after, "no write was acknowledged after a kill")
        gaps.append(after[0] - killed)
    gaps.sort()
    p99 = gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))]
    print(json.dumps({"kills": len(kill_times), "rest": len(rest_results), "ws": len(ws_acked), "transfers": len(transfer_results),
                      "redirects": next((r[1] for r in ws_results if isinstance(r, tuple)), 0),
                      "failover_p50_ms": round(statistics.median(gaps) * 1000), "failover_p99_ms": round(p99 * 1000)}))
    print("cluster: postgres restart ok" if RESTART else "cluster: failover ok")


if __name__ == "__main__":
    try:
        main()
    finally:
        for node in nodes:
            if node.process and node.process.poll() is None:
                node.process.kill()
