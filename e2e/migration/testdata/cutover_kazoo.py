"""Run a kazoo Election with two contenders across a migration cutover.

Usage: cutover_kazoo.py HOSTS PATH

Two KazooClients (two sessions) run kazoo.recipe.election.Election on
PATH; whichever leads prints "LEADER <name> <session>" and leads until the
end. Every connection state change prints "STATE <name> <state>". After
"READY", each "CHECK" line on stdin checks that the leader still leads
(its contender node is the first, owned by its unchanged session), that
both sessions are unchanged, and that a write through each client works,
then prints "STILL-LEADER <name> <session>" or "FAIL what". At the end
of stdin the leader steps down, the other contender (waiting all along
on a watch of the leader's node) must then lead ("LEADER <name> ..."
again), and the script prints "CLOSING", closes both and prints "DONE".
"""
import sys
import threading
import time

from kazoo.client import KazooClient

hosts, path = sys.argv[1], sys.argv[2]
lock = threading.Lock()


def out(*parts):
    with lock:
        print(" ".join(str(p) for p in parts), flush=True)


def client(name):
    zk = KazooClient(hosts=hosts, timeout=20)
    zk.add_listener(lambda state: out("STATE", name, state))
    zk.start(timeout=20)
    return zk


clients = {"one": client("one"), "two": client("two")}
sessions = {n: zk.client_id[0] for n, zk in clients.items()}
elections = {n: zk.Election(path, n) for n, zk in clients.items()}
leading = threading.Event()
leader = []
stop = threading.Event()


def lead(name):
    leader.append(name)
    out("LEADER", name, "%x" % sessions[name])
    leading.set()
    stop.wait()


def contend(name):
    elections[name].run(lead, name)


threads = []
for n in ("one", "two"):
    th = threading.Thread(target=contend, args=(n,), daemon=True)
    th.start()
    threads.append(th)
    if n == "one":
        if not leading.wait(20):
            out("FAIL no leader")
            sys.exit(1)
out("READY")

rounds = 0
for line in sys.stdin:
    if line.strip() != "CHECK":
        continue
    rounds += 1
    failures = []
    # After a server's loss a client may be reconnecting: within its
    # session that is allowed, so wait for it.
    for n, zk in clients.items():
        for _ in range(300):
            if zk.connected:
                break
            time.sleep(0.1)
        else:
            failures.append("%s is not connected: %s" % (n, zk.state))
    if len(leader) != 1:
        failures.append("leaders %s" % leader)
    name = leader[0]
    for n, zk in clients.items():
        # client_id is None while the client is not connected, and a client
        # that just reconnected may be dropped again (a member that loses
        # its quorum closes its read-write connections): wait for it.
        cid = zk.client_id
        for _ in range(300):
            if cid is not None:
                break
            time.sleep(0.1)
            cid = zk.client_id
        if cid is None or cid[0] != sessions[n]:
            failures.append("session of %s is %s, was %x" % (n, cid, sessions[n]))
    contenders = clients[name].retry(elections[name].contenders)
    if contenders[:1] != [name] or sorted(contenders) != ["one", "two"]:
        failures.append("contenders %s" % contenders)
    kids = sorted(clients[name].retry(clients[name].get_children, path), key=lambda k: k[-10:])
    _, st = clients[name].retry(clients[name].get, path + "/" + kids[0])
    if st.ephemeralOwner != sessions[name]:
        failures.append("first contender node %s owned by %x" % (kids[0], st.ephemeralOwner))
    for n, zk in clients.items():
        try:
            zk.retry(zk.create, "/cutover-writes/kazoo-%d-%s-" % (rounds, n), b"", sequence=True, makepath=True)
        except Exception as e:  # noqa: BLE001 - any failure is reported
            failures.append("write %s: %r" % (n, e))
    if failures:
        out("FAIL", "; ".join(failures))
    else:
        out("STILL-LEADER", name, "%x" % sessions[name])

stop.set()
for th in threads:
    th.join(20)
if len(leader) != 2:
    out("FAIL the other contender did not lead once the leader stepped down:", leader)
out("CLOSING")
for zk in clients.values():
    zk.stop()
    zk.close()
out("DONE")
