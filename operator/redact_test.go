package operator

import (
	"strings"
	"testing"
)

// TestRedactConfig: initial_configuration shows zoo.cfg without its
// secrets (7d71c65 served superDigest and keystore passwords as written).
func TestRedactConfig(t *testing.T) {
	in := "tickTime=2000\n" +
		"superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=\n" +
		"zookeeper.DigestAuthenticationProvider.superDigest = super:x\n" +
		"ssl.keyStore.location=/etc/zk/keystore.p12\n" +
		"ssl.keyStore.password=hunter2\n" +
		"ssl.quorum.trustStore.password=hunter3\n" +
		"#ssl.trustStore.password=old\n" +
		"server.1=127.0.0.1:2888:3888;2181"
	out := redactConfig(in)
	for _, secret := range []string{"D/InIHSb7yEEbrWz8b9l71RjZJU=", "super:x", "hunter2", "hunter3", "old"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q still shown:\n%s", secret, out)
		}
	}
	for _, kept := range []string{"tickTime=2000\n", "ssl.keyStore.location=/etc/zk/keystore.p12\n", "ssl.keyStore.password=********\n",
		"server.1=127.0.0.1:2888:3888;2181"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q missing:\n%s", kept, out)
		}
	}
	if strings.Count(out, "\n") != strings.Count(in, "\n") {
		t.Errorf("line count changed:\n%s", out)
	}
}
