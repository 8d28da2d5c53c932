"""Run kazoo's own TestReconfig against a running ensemble, then the same
with wide server ids, and print one line per check.

Usage: kazoo_reconfig.py HOSTS

HOSTS is the ensemble's client addresses, comma separated (no member may
have id 100 or 1000, which the script adds and removes); the super user
is super:test, as kazoo's test expects. kazoo's tests import pytest and
mock, which Debian's python3-kazoo does not need: the few pieces
TestReconfig uses are supplied here, so the test bodies run unchanged.
Exit status 1 on the first failure.
"""
import contextlib
import socket
import sys
import types
import unittest.mock

from kazoo.client import KazooClient
from kazoo.exceptions import MarshallingError, NoAuthError

hosts = sys.argv[1]


class Skipped(Exception):
    pass


@contextlib.contextmanager
def raises(kind):
    try:
        yield
    except kind:
        return
    raise AssertionError("%s not raised" % kind.__name__)


def skip(msg):
    raise Skipped(msg)


pytest = types.ModuleType("pytest")
pytest.raises, pytest.skip = raises, skip
sys.modules.setdefault("pytest", pytest)
sys.modules.setdefault("mock", unittest.mock)

from kazoo.tests.test_client import TestReconfig  # noqa: E402


def case(name):
    """TestReconfig(name) connected to hosts, without kazoo's harness
    (which starts ZooKeeper servers of its own)."""
    tc = TestReconfig(name)
    tc.hosts, tc._clients = hosts, []

    def get_client(**opts):
        c = KazooClient(hosts, **opts)
        tc._clients.append(c)
        return c

    tc._get_client = get_client
    tc.client = get_client()
    tc.client.start()
    return tc


def run(name, body):
    try:
        body()
    except Exception as e:  # noqa: BLE001: report any failure by name
        print("FAIL %s: %r" % (name, e), flush=True)
        sys.exit(1)
    print("ok %s" % name, flush=True)


for name in ("test_no_super_auth", "test_add_remove_observer", "test_bad_input"):
    tc = case(name)
    run("kazoo TestReconfig::" + name, getattr(tc, name))
    for c in tc._clients:
        c.stop()


# WIDE is the observer's id: above 255, and no member's.
WIDE = 1000


def wide_observer():
    """test_add_remove_observer with observer WIDE, as the super user."""
    client = KazooClient(hosts, auth_data=[("digest", "super:test")])
    client.start()
    # Three ports nothing listens on (connect gets RST), as kazoo's test;
    # ZooKeeper refuses one port for two roles.
    socks = [socket.socket() for _ in range(3)]
    for s in socks:
        s.bind(("", 0))
    ports = tuple(s.getsockname()[1] for s in socks)
    joining = "server.%d=0.0.0.0:%d:%d:observer;0.0.0.0:%d" % ((WIDE,) + ports)
    data, _ = client.reconfig(joining=joining, leaving=None, new_members=None)
    assert joining.encode() in data, data
    data, _ = client.reconfig(joining=None, leaving=str(WIDE), new_members=None)
    assert b"server.%d=" % WIDE not in data, data
    client.stop()
    for s in socks:
        s.close()


def no_auth_before_bad_id():
    """Without the super user: a wide id is NoAuth; one that is not a long
    is MarshallingError, as ZooKeeper's NumberFormatException."""
    client = KazooClient(hosts)
    client.start()
    with raises(NoAuthError):
        client.reconfig(joining="server.70000=0.0.0.0:1234:2345:observer;3456", leaving=None, new_members=None)
    with raises(MarshallingError):
        client.reconfig(joining="server.x=0.0.0.0:1234:2345:observer;3456", leaving=None, new_members=None)
    client.stop()


def sessions_unique():
    """Sessions made on every member, which share a session id prefix."""
    seen = set()
    for addr in hosts.split(","):
        for _ in range(5):
            c = KazooClient(addr)
            c.start()
            sid = c.client_id[0]
            assert sid not in seen, hex(sid)
            seen.add(sid)
    print("sessions %d, top bytes %s" % (len(seen), sorted({hex(s >> 56 & 0xff) for s in seen})), flush=True)


run("observer %d added and removed by the super user" % WIDE, wide_observer)
run("NoAuth for server.70000, MarshallingError for server.x", no_auth_before_bad_id)
run("sessions unique across members", sessions_unique)
