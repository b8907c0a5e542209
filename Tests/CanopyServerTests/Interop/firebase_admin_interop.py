"""Drives the real firebase-admin (Python) against a running `canopy serve`.

Usage: python firebase_admin_interop.py http://127.0.0.1:PORT?ns=NAME

Exits 0 when every check passed, non-zero (with the failed check) otherwise.
"""
import sys
import threading
import time

import firebase_admin
from firebase_admin import db

URL = sys.argv[1]
TIMEOUT = 15


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok:", what, flush=True)


def main():
    app = firebase_admin.initialize_app(options={"databaseURL": URL})
    writer = firebase_admin.initialize_app(options={"databaseURL": URL}, name="writer")
    root = db.reference("/", app)
    root.delete()

    # get / set / update / push / delete
    alice = db.reference("users/alice", app)
    alice.set({"name": "Alice", "emoji": "\u00e9\u2603"})
    check(alice.get() == {"name": "Alice", "emoji": "\u00e9\u2603"}, "set then get (non-ASCII)")
    root.update({"users/bob/name": "Bob", "users/alice/age": 36})
    check(db.reference("users", app).get() == {"alice": {"name": "Alice", "emoji": "\u00e9\u2603", "age": 36}, "bob": {"name": "Bob"}}, "multi-path update")
    db.reference("users/bob", app).update({"name": None, "nick": "b"})
    check(db.reference("users/bob", app).get() == {"nick": "b"}, "update deletes with None")
    posts = db.reference("posts", app)
    first = posts.push({"author": "alice", "stars": 3})
    second = posts.push()
    check(len(first.key) == 20 and first.key < second.key, "push ids are 20 characters and increase")
    check(first.get() == {"author": "alice", "stars": 3} and second.get() == "", "pushed values")
    second.delete()
    check(second.get() is None, "delete")

    # ordered and limited queries
    scores = db.reference("scores", app)
    scores.set({"a": {"s": 3, "m": {"r": 9}, "who": "bob"}, "b": {"s": 1, "m": {"r": 2}, "who": "al"}, "c": {"s": 2, "who": "bob"}, "d": {"s": 7}})
    top = scores.order_by_child("s").limit_to_last(2).get()
    check(list(top.keys()) == ["a", "d"], "order_by_child + limit_to_last: %s" % list(top.keys()))
    low = scores.order_by_child("s").limit_to_first(2).get()
    check(list(low.keys()) == ["b", "c"], "order_by_child + limit_to_first")
    ranged = scores.order_by_child("m/r").start_at(2).end_at(5).get()
    check(list(ranged.keys()) == ["b"], "nested child path with start_at/end_at")
    keys = scores.order_by_key().start_at("b").end_at("c").get()
    check(list(keys.keys()) == ["b", "c"], "order_by_key with a range")
    by_author = scores.order_by_child("who").equal_to("bob").get()
    check(sorted(by_author.keys()) == ["a", "c"], "equal_to")
    values = db.reference("values", app)
    values.set({"x": 5, "y": 1, "z": 3})
    check(list(values.order_by_value().limit_to_first(2).get().keys()) == ["y", "z"], "order_by_value + limit_to_first")

    # shallow reads
    check(scores.get(shallow=True) == {"a": True, "b": True, "c": True, "d": True}, "shallow read")

    # ETags
    value, etag = alice.get(etag=True)
    check(value["name"] == "Alice" and isinstance(etag, str) and etag, "get(etag=True)")
    changed, _, _ = alice.get_if_changed(etag)
    check(changed is False, "get_if_changed on an unchanged value")
    ok, _, _ = alice.set_if_unchanged(etag, {"name": "Alice2"})
    check(ok, "set_if_unchanged with the current ETag")
    ok, current, new_etag = alice.set_if_unchanged(etag, {"name": "Alice3"})
    check(not ok and current == {"name": "Alice2"} and new_etag and new_etag != etag, "set_if_unchanged with a stale ETag gets the current value and ETag")
    changed, current, _ = alice.get_if_changed(etag)
    check(changed and current == {"name": "Alice2"}, "get_if_changed after a change")

    # concurrent transactions from several threads: no increment lost, none applied twice. The
    # SDK gives up on a transaction after 25 lost compare-and-set rounds (TransactionAbortedError):
    # on a loaded machine a thread can lose that often, which is the protocol working, so the
    # counter must equal exactly the transactions that reported success.
    counter = db.reference("counter", app)
    threads, per_thread = 6, 8
    errors = []
    committed = []
    aborted = []

    def work():
        for _ in range(per_thread):
            try:
                counter.transaction(lambda v: (v or 0) + 1)
                committed.append(1)
            except db.TransactionAbortedError:
                aborted.append(1)
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    check(not errors, "transactions raised nothing but TransactionAbortedError: %s" % errors)
    check(len(committed) + len(aborted) == threads * per_thread and len(committed) > 0,
          "every transaction committed or gave up (%d committed, %d gave up)" % (len(committed), len(aborted)))
    check(counter.get() == len(committed), "no increment lost or applied twice: %s for %d commits" % (counter.get(), len(committed)))

    # listen() receives another client's writes
    events = []
    arrived = threading.Condition()

    def listener(event):
        with arrived:
            events.append((event.event_type, event.path, event.data))
            arrived.notify_all()

    def wait_for(predicate, what):
        deadline = time.time() + TIMEOUT
        with arrived:
            while not predicate():
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError("timed out waiting for %s; events: %s" % (what, events))
                arrived.wait(left)
        print("ok:", what, flush=True)

    room = db.reference("rooms/r1", app)
    room.set({"title": "Lobby"})
    registration = room.listen(listener)
    wait_for(lambda: ("put", "/", {"title": "Lobby"}) in events, "listen: initial put")
    db.reference("rooms/r1/messages/m1", writer).set({"text": "hi \u2603"})
    wait_for(lambda: ("put", "/messages/m1", {"text": "hi \u2603"}) in events, "listen: another client's set")
    db.reference("rooms/r1", writer).update({"title": "Hall", "messages/m2/text": "yo"})
    wait_for(lambda: any(e[0] == "patch" and e[2] == {"title": "Hall", "messages/m2/text": "yo"} for e in events), "listen: another client's update")
    db.reference("rooms", writer).update({"r1/title": "Atrium"})
    wait_for(lambda: ("put", "/title", "Atrium") in events, "listen: a write above the location")
    db.reference("rooms/r1/messages/m1", writer).delete()
    wait_for(lambda: ("put", "/messages/m1", None) in events, "listen: a delete")
    check(all(not str(e[0]).endswith("\r") for e in events), "event names have no CR")
    registration.close()

    print("interop: all checks passed", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # noqa: BLE001
        print("interop: FAILED:", repr(error), flush=True)
        sys.exit(1)
