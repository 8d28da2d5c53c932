"""A kazoo Election driven by lines on stdin, for zkraft elect's tests.

usage: kazoo_elect.py HOST:PORT PATH IDENTIFIER
stdin: "campaign" starts campaigning and prints CAMPAIGNING; "await SECONDS"
prints LEADER once elected, or TIMEOUT; "resign" ends the leadership (or
the campaign) and prints RESIGNED.
"""
import sys
import threading

from kazoo.client import KazooClient

client = KazooClient(hosts=sys.argv[1])
client.start(timeout=10)
election = None
elected = threading.Event()
resign = threading.Event()
thread = None


def lead():
    elected.set()
    resign.wait()


print("READY", flush=True)
for line in sys.stdin:
    words = line.split()
    if words[0] == "campaign":
        elected.clear()
        resign.clear()
        election = client.Election(sys.argv[2], sys.argv[3])
        thread = threading.Thread(target=election.run, args=(lead,), daemon=True)
        thread.start()
        print("CAMPAIGNING", flush=True)
    elif words[0] == "await":
        print("LEADER" if elected.wait(float(words[1])) else "TIMEOUT", flush=True)
    elif words[0] == "resign":
        resign.set()
        election.cancel()
        thread.join()
        print("RESIGNED", flush=True)
client.stop()
