"""A kazoo Lock driven by lines on stdin, for zkraft lock's tests.

usage: kazoo_lock.py HOST:PORT PATH [EXTRA_PATTERN...]
stdin: "acquire SECONDS" prints GOT or TIMEOUT; "release" prints RELEASED.
"""
import sys

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout

client = KazooClient(hosts=sys.argv[1])
client.start(timeout=10)
lock = client.Lock(sys.argv[2], extra_lock_patterns=sys.argv[3:])
print("READY", flush=True)
for line in sys.stdin:
    words = line.split()
    if words[0] == "acquire":
        try:
            print("GOT" if lock.acquire(timeout=float(words[1])) else "TIMEOUT", flush=True)
        except LockTimeout:
            print("TIMEOUT", flush=True)
    elif words[0] == "release":
        lock.release()
        print("RELEASED", flush=True)
client.stop()
