"""Connects through kazoo over TLS with a client certificate and prints
what a client can see: its identity-based ACL at work.

Usage: tls.py host:port certfile keyfile cafile path
"""
import sys

from kazoo.client import KazooClient
from kazoo.security import make_acl

host, cert, key, ca, path = sys.argv[1:6]
zk = KazooClient(hosts=host, use_ssl=True, certfile=cert, keyfile=key, ca=ca)
zk.start(timeout=15)
zk.create(path, b"v", acl=[make_acl("x509", "CN=localhost", all=True)])
print("data", zk.get(path)[0])
print("acl", zk.get_acls(path)[0])
zk.stop()
