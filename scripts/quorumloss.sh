#!/usr/bin/env bash
# How long a leader of three members takes to stop leading once both its
# followers stop, for zkraft or Debian's ZooKeeper 3.8, with tickTime 2000,
# initLimit 10 and syncLimit 5 on loopback (issue 38, docs/DESIGN.md,
# "Leader without a quorum"):
#
#   scripts/quorumloss.sh zkraft|zookeeper term|stop [base-port] [exit [delay]]
#
# term sends both followers SIGTERM (their connections close), stop sends
# them SIGSTOP (they fall silent). It prints the time from the signal until
# the leader's srvr no longer says "Mode: leader", then how long the leader
# takes to exit on SIGTERM. With "exit", the leader gets its SIGTERM delay
# seconds (default 1) after its followers' signal instead. READONLY=1
# turns read-only mode on (readonlymode.enabled; srvr then says "Mode:
# read-only" where it would not be serving). zkraft is
# $ZKRAFT (default bin/zkraft: make build); ports base+1..base+23 are used
# (default base 31000). Everything started is killed on exit.
set -u
sys=$1
sig=$2
base=${3:-31000}
zkraft=${ZKRAFT:-bin/zkraft}
root=$(mktemp -d)
pids=()
cfgExtra=""
jvmExtra=()
if [ "${READONLY:-}" = 1 ]; then
	cfgExtra="readonlymode.enabled=true"$'\n' # zkraft reads it from zoo.cfg
	jvmExtra=(-Dreadonlymode.enabled=true)      # ZooKeeper from a system property
fi

srvr() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1; echo srvr >&3; cat <&3" 2>/dev/null; }
mode() { srvr "$1" | sed -n 's/^Mode: //p'; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

cleanup() {
	for i in 1 2 3; do
		kill -CONT "${pids[$i]}" 2>/dev/null
		kill -9 "${pids[$i]}" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$root"
}
trap cleanup EXIT

lines=""
for i in 1 2 3; do
	lines+="server.$i=127.0.0.1:$((base + 10 + i)):$((base + 20 + i));127.0.0.1:$((base + i))"$'\n'
done
for i in 1 2 3; do
	d=$root/$i
	mkdir -p "$d"
	echo $i >"$d/myid"
	printf 'tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir=%s\n4lw.commands.whitelist=*\nadmin.enableServer=false\n%s%s' \
		"$d" "$cfgExtra" "$lines" >"$d/zoo.cfg"
	if [ "$sys" = zkraft ]; then
		"$zkraft" server --config "$d/zoo.cfg" >"$d/log" 2>&1 &
	else
		java -XX:-UsePerfData -Xmx192m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${jvmExtra[@]}" \
			-cp "$d:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar" \
			org.apache.zookeeper.server.quorum.QuorumPeerMain "$d/zoo.cfg" >"$d/log" 2>&1 &
	fi
	pids[$i]=$!
done

leader=""
for _ in $(seq 1 600); do
	for i in 1 2 3; do
		[ "$(mode $((base + i)))" = leader ] && leader=$i
	done
	[ -n "$leader" ] && break
	sleep 0.1
done
if [ -z "$leader" ]; then
	echo "no leader" >&2
	exit 1
fi
sleep 3 # followers synced

signal=TERM
[ "$sig" = stop ] && signal=STOP
t0=$(now)
for i in 1 2 3; do
	[ $i != "$leader" ] && kill -$signal "${pids[$i]}"
done
if [ "${4:-}" = exit ]; then
	sleep "${5:-1}"
	t0=$(now)
	kill -TERM "${pids[$leader]}"
	wait "${pids[$leader]}" 2>/dev/null
	echo "$sys $sig: leader exited $(since "$t0") s after its SIGTERM, ${5:-1} s after its followers'"
	exit 0
fi
while m=$(mode $((base + leader))); [ "$m" = leader ]; do
	sleep 0.05
done
echo "$sys $sig: leader left leader mode $(since "$t0") s after its followers' SIG$signal (srvr: ${m:-not serving})"
if [ "${READONLY:-}" = 1 ]; then
	while m=$(mode $((base + leader))); [ "$m" != read-only ]; do
		sleep 0.05
	done
	echo "$sys $sig: leader read-only $(since "$t0") s after its followers' SIG$signal"
fi
t0=$(now)
kill -TERM "${pids[$leader]}"
wait "${pids[$leader]}" 2>/dev/null
echo "$sys $sig: leader exited $(since "$t0") s after its SIGTERM"
