#!/usr/bin/env python3
"""A leader cut from PostgreSQL but not from its clients (root only: a network namespace of its own).

Usage: cluster_partition.py CANOPY POSTGRES_SCRIPT

Node A runs in a network namespace with two veth pairs: one to PostgreSQL (10.213.1.0/24), one to
its clients (10.213.2.0/24); node B runs on 127.0.0.2. A writer sends REST sets to A, then to
whichever node answers. Cutting A's PostgreSQL link: A acknowledges nothing more, B takes the
namespace over once A's lease has run out, and every write either node acknowledged is in the final
data. Healed, A serves again (redirecting to B). Prints "cluster: partition ok".
"""
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

CANOPY, POSTGRES = sys.argv[1], sys.argv[2]
SUFFIX = f"{os.getpid() % 10000}"
NS_NAME = f"canopy-part-{SUFFIX}"
PG_HOST, PG_NODE = "10.213.1.1", "10.213.1.2"
CLIENT_HOST, NODE_A = "10.213.2.1", "10.213.2.2"
NAMESPACE = "split"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def sh(*command):
    subprocess.run(list(command), check=True)


def netns(*command):
    sh("ip", "netns", "exec", NS_NAME, *command)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def set_up_network():
    sh("ip", "netns", "add", NS_NAME)
    for (host_if, ns_if, host_ip, ns_ip) in [(f"cpg{SUFFIX}h", f"cpg{SUFFIX}n", PG_HOST, PG_NODE),
                                             (f"ccl{SUFFIX}h", f"ccl{SUFFIX}n", CLIENT_HOST, NODE_A)]:
        sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        sh("ip", "link", "set", ns_if, "netns", NS_NAME)
        sh("ip", "addr", "add", f"{host_ip}/24", "dev", host_if)
        sh("ip", "link", "set", host_if, "up")
        netns("ip", "addr", "add", f"{ns_ip}/24", "dev", ns_if)
        netns("ip", "link", "set", ns_if, "up")
    netns("ip", "link", "set", "lo", "up")


def tear_down_network():
    subprocess.run(["ip", "link", "del", f"cpg{SUFFIX}h"], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "link", "del", f"ccl{SUFFIX}h"], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "netns", "del", NS_NAME], stderr=subprocess.DEVNULL)


def start_node(prefix, url, password_file, host, port):
    # A veth address is not loopback: the test's own network, served open on purpose.
    open_flag = [] if host.startswith("127.") else ["--insecure"]
    process = subprocess.Popen(
        prefix + [CANOPY, "serve"] + open_flag
        + ["--cluster", url, "--cluster-password-file", password_file, "--host", host, "--port", str(port),
           "--advertise", f"http://{host}:{port}", "--log-level", "notice"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=open(f"/tmp/canopy-partition-{host}.log", "ab"))
    line = process.stdout.readline().decode()
    check("serving node" in line, f"{host}: canopy serve did not start: {line!r}")
    threading.Thread(target=process.stdout.read, daemon=True).start()
    return process


def put(host, port, key, value, timeout=4):
    """A REST set at `host`, following a redirect; returns the host that acknowledged it."""
    url = f"http://{host}:{port}/w/{key}.json?ns={NAMESPACE}"
    for _ in range(3):
        request = urllib.request.Request(url, data=json.dumps(value).encode(), method="PUT")
        try:
            with urllib.request.build_opener(NoRedirect()).open(request, timeout=timeout) as response:
                check(response.status == 200, f"status {response.status}")
                return re.match(r"http://([^:/]+)", url).group(1)
        except urllib.error.HTTPError as error:
            if error.code != 307:
                raise
            url = error.headers["Location"]
    raise ConnectionError("too many redirects")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main():
    set_up_network()
    postgres_dir = None
    processes = []
    try:
        started = subprocess.run(["bash", POSTGRES, "start"], check=True, capture_output=True, text=True,
                                 env={**os.environ, "CANOPY_POSTGRES_LISTEN": PG_HOST})
        exports = dict(re.findall(r"export (\w+)='([^']*)'", started.stdout))
        postgres_dir = exports["CANOPY_CLUSTER_DIR"]
        pg_port = open(f"{postgres_dir}/port").read().strip()
        password_file = f"{postgres_dir}/password"
        port = free_port()
        node_a = start_node(["ip", "netns", "exec", NS_NAME], f"postgres://postgres@{PG_HOST}:{pg_port}/postgres", password_file,
                            NODE_A, port)
        node_b = start_node([], f"postgres://postgres@127.0.0.1:{pg_port}/postgres", password_file, "127.0.0.2", port)
        processes += [node_a, node_b]

        acked = {}  # key -> (value, host that acknowledged)
        i = 0
        # A takes the namespace and acknowledges writes.
        for _ in range(50):
            i += 1
            acked[f"k{i}"] = (i, put(NODE_A, port, f"k{i}", i))
        check(all(host == NODE_A for _, host in acked.values()), "node A leads and acknowledges")

        # The cut: A keeps its clients, loses PostgreSQL.
        cut = time.monotonic()
        netns("ip", "link", "set", f"cpg{SUFFIX}n", "down")
        a_after_cut = []
        b_first = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            i += 1
            # Until B has taken over, half the writes go to A (which must acknowledge none).
            target = random.choice([NODE_A, "127.0.0.2"]) if b_first is None else "127.0.0.2"
            try:
                host = put(target, port, f"k{i}", i)
            except Exception:  # noqa: BLE001 - A cannot commit; B may not lead yet
                continue
            acked[f"k{i}"] = (i, host)
            if host == NODE_A:
                a_after_cut.append(time.monotonic() - cut)
            elif b_first is None:
                b_first = time.monotonic() - cut
            if b_first is not None and sum(1 for _, h in acked.values() if h == "127.0.0.2") >= 30:
                break
        check(b_first is not None, "node B never took the namespace over")
        check(not a_after_cut, f"node A acknowledged writes after it was cut from PostgreSQL: {a_after_cut}")

        # Healed: A serves again (it redirects the namespace's clients to B, its leader now).
        netns("ip", "link", "set", f"cpg{SUFFIX}n", "up")
        healed = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and healed is None:
            i += 1
            try:
                host = put(NODE_A, port, f"k{i}", i)
                acked[f"k{i}"] = (i, host)
                healed = host
            except Exception:  # noqa: BLE001
                time.sleep(0.2)
        check(healed == "127.0.0.2", f"after healing, a write sent to A is served by B: {healed}")

        with urllib.request.urlopen(f"http://127.0.0.2:{port}/w.json?ns={NAMESPACE}", timeout=30) as response:
            final = json.loads(response.read())
        lost = [k for k, (v, _) in acked.items() if final.get(k) != v]
        check(not lost, f"acknowledged writes lost: {lost[:10]}")
        print(json.dumps({"acknowledged": len(acked), "takeover_after_cut_s": round(b_first, 2)}))
        print("cluster: partition ok")
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait()
        if postgres_dir:
            subprocess.run(["bash", POSTGRES, "stop", postgres_dir], check=False)
        tear_down_network()


if __name__ == "__main__":
    main()
