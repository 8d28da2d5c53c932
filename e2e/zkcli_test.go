package e2e

import (
	"strings"
	"testing"
	"time"
)

// zkCli runs script in Apache's zkCli (ZooKeeperMain; Netty's jars on the
// class path for a TLS client) against addr, with jvm's flags, and returns
// the transcript normalized by normalizeTLSTranscript. zkCli exits 1 when
// its last command failed, so only a hang is fatal.
func zkCli(t *testing.T, addr, script string, jvm ...string) string {
	t.Helper()
	cp := strings.Join(append([]string{zookeeperJar, slf4jNopJar}, nettyClientJars...), ":")
	args := append(append([]string{}, jvm...), "-cp", cp, "org.apache.zookeeper.ZooKeeperMain", "-waitforconnection", "-server", addr)
	out, err := runTool(t, 2*time.Minute, script, javaBin, args...)
	if err != nil && strings.Contains(err.Error(), "timed out") {
		t.Fatalf("zkCli against %s: %v\n%s", addr, err, out)
	}
	return normalizeTLSTranscript(out)
}
