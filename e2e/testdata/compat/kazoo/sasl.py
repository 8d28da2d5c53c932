"""Authenticates with SASL DIGEST-MD5 through kazoo (python3-pure-sasl) and
prints what a client can see: its znode's data and ACL.

Usage: sasl.py host:port user password path
"""
import sys

from kazoo.client import KazooClient
from kazoo.security import make_acl

host, user, password, path = sys.argv[1:5]
zk = KazooClient(hosts=host, sasl_options={"mechanism": "DIGEST-MD5", "username": user, "password": password})
zk.start(timeout=15)
zk.create(path, b"v", acl=[make_acl("sasl", user, all=True)])
data, _ = zk.get(path)
print("data", data)
print("acl", zk.get_acls(path)[0])
zk.stop()
