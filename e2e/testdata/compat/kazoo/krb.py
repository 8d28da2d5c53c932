"""Authenticates with SASL GSSAPI (Kerberos) through kazoo
(python3-pure-sasl over python3-kerberos) and prints what a client can see:
its znode's data and ACL. The client's key table stands in for kinit (MIT's
KRB5_CLIENT_KTNAME); the server is reached by the name "localhost", whose
service principal is zookeeper/localhost.

Usage: krb.py port krb5.conf client.keytab principal path
"""
import os
import sys
import tempfile

port, conf, keytab, principal, path = sys.argv[1:6]
os.environ["KRB5_CONFIG"] = conf
os.environ["KRB5_CLIENT_KTNAME"] = keytab
os.environ["KRB5CCNAME"] = "FILE:" + os.path.join(tempfile.mkdtemp(), "cc")

from kazoo.client import KazooClient  # noqa: E402 (after the environment)
from kazoo.security import make_acl  # noqa: E402

zk = KazooClient(hosts="localhost:" + port,
                 sasl_options={"mechanism": "GSSAPI", "service": "zookeeper", "principal": principal})
zk.start(timeout=15)
zk.create(path, b"v", acl=[make_acl("sasl", principal, all=True)])
data, _ = zk.get(path)
print("data", data)
print("acl", zk.get_acls(path)[0])
zk.stop()
