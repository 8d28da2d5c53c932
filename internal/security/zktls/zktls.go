// Package zktls builds the TLS configuration of a secure client port from
// ZooKeeper's ssl.* settings (secureClientPort in zoo.cfg): key and trust
// stores in the formats ZooKeeper reads (PKCS12, JKS, PEM), client
// certificate policy (ssl.clientAuth), protocols and cipher suites.
package zktls

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"strings"
)

// Options are ZooKeeper's ssl.* settings for the client port.
type Options struct {
	// KeyStore is the server's key and certificate chain
	// (ssl.keyStore.location); KeyStorePassword and KeyStoreType
	// (ssl.keyStore.password, ssl.keyStore.type: JKS, PKCS12 or PEM;
	// empty = from the file's extension, as ZooKeeper does).
	KeyStore, KeyStorePassword, KeyStoreType string
	// TrustStore holds the certificate authorities client certificates
	// must chain to (ssl.trustStore.*); empty = the system's roots, as the
	// JVM's default trust store.
	TrustStore, TrustStorePassword, TrustStoreType string
	// ClientAuth is ssl.clientAuth: "need" (the default, as ZooKeeper's),
	// "want" or "none".
	ClientAuth string
	// Protocol is ssl.protocol (TLSv1.2 or TLSv1.3): the one version
	// offered when set. Unset, TLS 1.2 and 1.3 are both offered
	// (ZooKeeper 3.8 offers 1.2 alone; a 1.2 client is served the same).
	Protocol string
	// EnabledProtocols is ssl.enabledProtocols; it overrides Protocol.
	EnabledProtocols []string
	// CipherSuites is ssl.ciphersuites by their IANA (and Java) names; TLS
	// 1.3's suites are not configurable.
	CipherSuites []string
}

// ServerConfig returns the tls.Config of a secure client port.
func ServerConfig(o Options) (*tls.Config, error) {
	if o.KeyStore == "" {
		return nil, errors.New("zktls: ssl.keyStore.location is required for a secure client port")
	}
	cert, err := loadKeyStore(o.KeyStore, o.KeyStorePassword, o.KeyStoreType)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if o.TrustStore != "" {
		roots, err := loadTrustStore(o.TrustStore, o.TrustStorePassword, o.TrustStoreType)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = roots
	}
	switch strings.ToLower(o.ClientAuth) {
	case "", "need":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "want":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "none":
		cfg.ClientAuth = tls.NoClientCert
	default:
		return nil, fmt.Errorf("zktls: ssl.clientAuth %q is not need, want or none", o.ClientAuth)
	}
	if err := setVersions(cfg, o); err != nil {
		return nil, err
	}
	if len(o.CipherSuites) > 0 {
		ids, err := cipherSuites(o.CipherSuites)
		if err != nil {
			return nil, err
		}
		cfg.CipherSuites = ids
	}
	return cfg, nil
}

var versions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

func setVersions(cfg *tls.Config, o Options) error {
	list := o.EnabledProtocols
	if len(list) == 0 && o.Protocol != "" {
		list = []string{o.Protocol}
	}
	if len(list) == 0 {
		cfg.MinVersion = tls.VersionTLS12
		return nil
	}
	for _, p := range list {
		v, ok := versions[strings.TrimSpace(p)]
		if !ok {
			return fmt.Errorf("zktls: protocol %q: only TLSv1.2 and TLSv1.3 are supported", p)
		}
		if cfg.MinVersion == 0 || v < cfg.MinVersion {
			cfg.MinVersion = v
		}
		if v > cfg.MaxVersion {
			cfg.MaxVersion = v
		}
	}
	return nil
}

func cipherSuites(names []string) ([]uint16, error) {
	known := map[string]uint16{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[s.Name] = s.ID
	}
	ids := make([]uint16, 0, len(names))
	for _, n := range names {
		id, ok := known[strings.TrimSpace(n)]
		if !ok {
			return nil, fmt.Errorf("zktls: unknown cipher suite %q", n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// ClientIdentity is the x509 identity ZooKeeper's X509AuthenticationProvider
// gives a client: its certificate's subject in RFC 2253 form, as Java's
// X500Principal.getName() writes it ("CN=client,OU=ops,O=example"), read
// from the raw subject so that every attribute is kept. Attributes without
// a keyword in Go's table (DC, UID among them, which Java names) come out
// as OID=#hex.
func ClientIdentity(cert *x509.Certificate) string {
	var rdns pkix.RDNSequence
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return cert.Subject.String()
	}
	return rdns.String()
}

// MemberConfigs are the TLS configurations of an ensemble's member
// connections (ZooKeeper's sslQuorum with ssl.quorum.* stores): both ends
// present the key store's certificate and verify the other's against the
// trust store (mutual authentication, always required); the dialing end
// also checks the member's host name or IP against the certificate unless
// verifyHost is false (ssl.quorum.hostnameVerification=false).
func MemberConfigs(o Options, verifyHost bool) (server, client *tls.Config, err error) {
	o.ClientAuth = "need"
	server, err = ServerConfig(o)
	if err != nil {
		return nil, nil, err
	}
	client = &tls.Config{
		Certificates: server.Certificates,
		RootCAs:      server.ClientCAs,
		MinVersion:   server.MinVersion,
		MaxVersion:   server.MaxVersion,
		CipherSuites: server.CipherSuites,
	}
	if !verifyHost {
		skipHostCheck(client)
	}
	return server, client, nil
}

// ClientConfig is a client's TLS configuration from ZooKeeper's client
// ssl settings (zookeeper.ssl.* in a zkCli -client-configuration file):
// the key store's certificate when one is given, the trust store's
// authorities (the system's without one), and the server's host name or IP
// checked against its certificate unless verifyHost is false. The caller
// sets ServerName per connection.
func ClientConfig(o Options, verifyHost bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.KeyStore != "" {
		cert, err := loadKeyStore(o.KeyStore, o.KeyStorePassword, o.KeyStoreType)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if o.TrustStore != "" {
		roots, err := loadTrustStore(o.TrustStore, o.TrustStorePassword, o.TrustStoreType)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = roots
	}
	if err := setVersions(cfg, o); err != nil {
		return nil, err
	}
	if !verifyHost {
		skipHostCheck(cfg)
	}
	return cfg, nil
}

// skipHostCheck makes cfg verify the peer's chain against its RootCAs (the
// system's when nil) but not its name: crypto/tls checks both or, with
// InsecureSkipVerify, neither, so the chain check is done here.
func skipHostCheck(cfg *tls.Config) {
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("zktls: the peer presented no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
}
