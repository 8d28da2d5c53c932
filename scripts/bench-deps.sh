#!/usr/bin/env bash
# bench-deps.sh: make sure `make bench` has its reference server, Apache
# ZooKeeper 3.8 from Debian's packages (the Java server in
# /usr/share/java/zookeeper.jar, a JVM, slf4j's simple binding). As root
# with apt-get it installs what is missing, as .ci/run does for the tests;
# otherwise it names the packages and fails.
set -euo pipefail

need=()
command -v java >/dev/null || need+=(default-jre-headless)
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper libzookeeper-java)
[ -f /usr/share/java/slf4j-simple.jar ] || need+=(libslf4j-java)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "bench: installing ${need[*]} (the reference Apache ZooKeeper ensemble)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
  exit 0
fi
echo "bench: Apache ZooKeeper 3.8 is needed as the reference; install it with:" >&2
echo "  sudo apt-get install ${need[*]}" >&2
exit 1
