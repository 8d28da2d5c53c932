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

// TestRedactConfigColonSeparator: zoo.cfg, a Java properties file, may
// separate a key from its value with ':' as well as '=' (javaprops reads
// both), and a secret so written is hidden too, all of it.
func TestRedactConfigColonSeparator(t *testing.T) {
	in := "ssl.keyStore.password: hunter2\n" +
		"ssl.quorum.keyStore.password:ab=cd\n" +
		"superDigest : super:D/InIHSb7yEEbrWz8b9l71RjZJU=\n" +
		"# was: ssl.trustStore.password=oldpw\n" +
		"server.1=127.0.0.1:2888:3888;2181\n"
	out := redactConfig(in)
	for _, secret := range []string{"hunter2", "ab", "cd", "D/InIHSb7yEEbrWz8b9l71RjZJU=", "oldpw"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q still shown:\n%s", secret, out)
		}
	}
	for _, kept := range []string{"ssl.keyStore.password:********\n", "server.1=127.0.0.1:2888:3888;2181\n"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q missing:\n%s", kept, out)
		}
	}
}
