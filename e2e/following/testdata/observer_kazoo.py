"""Drive kazoo against one server and print a transcript of results.

Usage: observer_kazoo.py CLIENT_ADDR ZK_ADDR ROOT

The transcript holds only what must be equal between a zkraft Observer and
a ZooKeeper server (no zxids, times or session ids): the test runs it
against both and compares. ZK_ADDR is a ZooKeeper server the script writes
through out of band, to fire the client's watch.
"""
import sys
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError

addr, zkaddr, root = sys.argv[1], sys.argv[2], sys.argv[3]


def out(*parts):
    print(" ".join(str(p) for p in parts), flush=True)


def stat(st, session):
    return "v=%d cv=%d len=%d kids=%d eph=%s" % (
        st.version, st.cversion, st.dataLength, st.numChildren,
        "self" if st.ephemeralOwner == session else st.ephemeralOwner)


def rel(path):
    return path[len(root):] if path.startswith(root) else path


zk = KazooClient(hosts=addr, timeout=10)
zk.start(timeout=20)
other = KazooClient(hosts=zkaddr, timeout=10)
other.start(timeout=20)
sid = zk.client_id[0]

out("create", rel(zk.create(root, b"r")))
out("create", rel(zk.create(root + "/p", b"persistent")))
out("ephemeral", rel(zk.create(root + "/e", b"eph", ephemeral=True)))
first_seq = zk.create(root + "/s-", b"s", sequence=True)
out("sequential", rel(first_seq))
out("sequential", rel(zk.create(root + "/s-", b"s", sequence=True)))
out("ephseq", rel(zk.create(root + "/es-", b"es", ephemeral=True, sequence=True)))
try:
    zk.create(root + "/p", b"again")
except NodeExistsError:
    out("create-existing NodeExistsError")

data, st = zk.get(root + "/e")
out("get-ephemeral", data.decode(), stat(st, sid))
data, st = zk.get(root + "/p")
out("get", data.decode(), stat(st, sid))
st = zk.set(root + "/p", b"v1", version=0)
out("set", stat(st, sid))
try:
    zk.set(root + "/p", b"v2", version=0)
except BadVersionError:
    out("set-stale BadVersionError")
st = zk.set(root + "/p", b"v2", version=-1)
out("set-any", stat(st, sid))
try:
    zk.get(root + "/missing")
except NoNodeError:
    out("get-missing NoNodeError")
out("exists-missing", zk.exists(root + "/missing"))

kids, st = zk.get_children(root, include_data=True)
out("children", sorted(kids), stat(st, sid))

# A watch set through the client fires for a write made on ZooKeeper.
fired = threading.Event()
events = []


def watch(ev):
    events.append("%s %s" % (ev.type, rel(ev.path)))
    fired.set()


zk.get(root + "/p", watch=watch)
other.set(root + "/p", b"from-zk")
fired.wait(10)
out("data-watch", events)
fired.clear()
del events[:]
zk.get_children(root, watch=watch)
other.create(root + "/z", b"z")
fired.wait(10)
out("child-watch", events)
zk.sync(root + "/z")
data, st = zk.get(root + "/z")
out("read-after-sync", data.decode(), stat(st, sid))

# A transaction, then a failing one.
tx = zk.transaction()
tx.create(root + "/t", b"t")
tx.check(root + "/p", 3)
tx.set_data(root + "/t", b"t2", version=0)
tx.create(root + "/t/c", b"", ephemeral=True)
tx.delete(first_seq)
res = tx.commit()
out("tx", [rel(r) if isinstance(r, str) else (stat(r, sid) if hasattr(r, "version") else repr(r)) for r in res])
tx = zk.transaction()
tx.create(root + "/u", b"u")
tx.check(root + "/p", 99)
res = tx.commit()
out("tx-failing", [type(r).__name__ if isinstance(r, Exception) else rel(r) for r in res])
out("tx-failing-create-absent", zk.exists(root + "/u") is None)

# Deletes: versioned, stale, not empty.
try:
    zk.delete(root + "/t", version=-1)
except NotEmptyError:
    out("delete-not-empty NotEmptyError")
try:
    zk.delete(root + "/p", version=0)
except BadVersionError:
    out("delete-stale BadVersionError")
zk.delete(root + "/p", version=3)
out("deleted", zk.exists(root + "/p") is None)
other.sync(root)
out("deleted-on-zk", other.exists(root + "/p") is None)

# The session's ephemerals go with it.
zk.stop()
zk.close()
other.sync(root)
kids = other.get_children(root)
out("after-close", sorted(kids))
other.delete(root, recursive=True)
other.stop()
out("DONE")
