"""Drive a ZooKeeper server with kazoo (python3-kazoo) and print one line per
check; the Go test TestKazoo compares the transcript.

usage: kazoo_client.py HOST:PORT ROOT
"""
import sys
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, BadVersionError, NotEmptyError

host, root = sys.argv[1], sys.argv[2]
out = []
zk = KazooClient(hosts=host, timeout=10)
zk.start(timeout=15)

zk.create(root + "/a", b"1", makepath=True)
try:
    zk.create(root + "/a")
except NodeExistsError:
    out.append("create existing: NodeExistsError")
seq = zk.create(root + "/q-", b"", sequence=True, ephemeral=True)
out.append("sequential: " + seq[len(root):])
data, st = zk.get(root + "/a")
out.append("get: %r version=%d" % (data, st.version))
try:
    zk.set(root + "/a", b"x", version=7)
except BadVersionError:
    out.append("set wrong version: BadVersionError")
try:
    zk.get(root + "/missing")
except NoNodeError:
    out.append("get missing: NoNodeError")

fired = threading.Event()
events = []


def watcher(event):
    events.append("%s %s" % (event.type, event.path[len(root):]))
    fired.set()


zk.get(root + "/a", watch=watcher)
zk.set(root + "/a", b"2")
fired.wait(5)
out.append("watch: %s" % events)

fired.clear()
events.clear()
zk.get_children(root, watch=watcher)
zk.create(root + "/b")
fired.wait(5)
out.append("child watch: %s" % events)

t = zk.transaction()
t.create(root + "/t1", b"x")
t.check(root + "/a", 1)
t.set_data(root + "/a", b"3")
out.append("transaction: %s" % [r if isinstance(r, str) else type(r).__name__ for r in t.commit()])
t = zk.transaction()
t.create(root + "/t2")
t.check(root + "/a", 99)
out.append("failed transaction: %s" % [type(r).__name__ for r in t.commit()])
out.append("t2 exists: %s" % (zk.exists(root + "/t2") is not None))

lock = zk.Lock(root + "/lock", "me")
with lock:
    out.append("lock contenders: %s" % lock.contenders())
try:
    zk.delete(root)
except NotEmptyError:
    out.append("delete non-empty: NotEmptyError")
out.append("children: %s" % sorted(c if not c.startswith("q-") else "q-*" for c in zk.get_children(root)))
zk.delete(root, recursive=True)
out.append("root exists after recursive delete: %s" % (zk.exists(root) is not None))
zk.stop()
zk.close()
print("\n".join(out))
