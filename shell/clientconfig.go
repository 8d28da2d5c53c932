package shell

import (
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/internal/zookeeper/javaprops"
)

// LoadClientConfiguration reads a zkCli -client-configuration file (Java
// properties) and returns the TLS configuration it asks for, or nil when
// zookeeper.client.secure is not true: the zookeeper.ssl.keyStore.*,
// zookeeper.ssl.trustStore.*, zookeeper.ssl.protocol and
// zookeeper.ssl.hostnameVerification keys. Keys for the JVM
// (zookeeper.clientCnxnSocket) and SASL have no meaning here.
func LoadClientConfiguration(path string) (*tls.Config, error) {
	p, err := javaprops.Load(path)
	if err != nil {
		return nil, fmt.Errorf("client configuration: %w", err)
	}
	get := func(k string) string { return p.Values["zookeeper."+k] }
	if get("client.secure") != "true" {
		return nil, nil
	}
	o := zktls.Options{
		KeyStore: get("ssl.keyStore.location"), KeyStorePassword: get("ssl.keyStore.password"),
		KeyStoreType: get("ssl.keyStore.type"), TrustStore: get("ssl.trustStore.location"),
		TrustStorePassword: get("ssl.trustStore.password"), TrustStoreType: get("ssl.trustStore.type"),
		Protocol: get("ssl.protocol"),
	}
	if v := get("ssl.enabledProtocols"); v != "" {
		o.EnabledProtocols = strings.Split(v, ",")
	}
	cfg, err := zktls.ClientConfig(o, get("ssl.hostnameVerification") != "false")
	if err != nil {
		return nil, fmt.Errorf("client configuration %s: %w", path, err)
	}
	return cfg, nil
}
