package zktls

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// storeType is a store's format: the explicit ssl.*.type, else the file's
// extension (.jks, .p12 or .pfx, .pem), as ZooKeeper's
// KeyStoreFileType.fromPropertyValueOrFileName.
func storeType(path, explicit string) (string, error) {
	if explicit != "" {
		t := strings.ToUpper(explicit)
		switch t {
		case "JKS", "PKCS12", "PEM":
			return t, nil
		}
		return "", fmt.Errorf("zktls: store type %q is not JKS, PKCS12 or PEM", explicit)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jks":
		return "JKS", nil
	case ".p12", ".pfx":
		return "PKCS12", nil
	case ".pem":
		return "PEM", nil
	}
	return "", fmt.Errorf("zktls: cannot tell the type of store %s from its extension; set its ssl.*.type", path)
}

// loadKeyStore reads the server's private key and certificate chain.
func loadKeyStore(path, password, typ string) (tls.Certificate, error) {
	t, err := storeType(path, typ)
	if err != nil {
		return tls.Certificate{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("zktls: key store: %w", err)
	}
	var key crypto.PrivateKey
	var chain []*x509.Certificate
	switch t {
	case "PKCS12":
		k, leaf, cas, err := pkcs12.DecodeChain(data, password)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("zktls: key store %s: %w", path, err)
		}
		key, chain = k, append([]*x509.Certificate{leaf}, cas...)
	case "JKS":
		key, chain, err = jksKey(data, password)
	case "PEM":
		key, chain, err = pemKey(data)
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("zktls: key store %s: %w", path, err)
	}
	if key == nil || len(chain) == 0 {
		return tls.Certificate{}, fmt.Errorf("zktls: key store %s holds no private key with a certificate", path)
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

// loadTrustStore reads the certificate authorities clients are checked
// against.
func loadTrustStore(path, password, typ string) (*x509.CertPool, error) {
	t, err := storeType(path, typ)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("zktls: trust store: %w", err)
	}
	var certs []*x509.Certificate
	switch t {
	case "PKCS12":
		certs, err = pkcs12.DecodeTrustStore(data, password)
	case "JKS":
		certs, err = jksTrusted(data, password)
	case "PEM":
		certs, err = pemCerts(data)
	}
	if err != nil {
		return nil, fmt.Errorf("zktls: trust store %s: %w", path, err)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("zktls: trust store %s holds no certificate", path)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// jksKey is the first private key entry of a Java key store (its key
// protected by the store's password, as keytool writes it).
func jksKey(data []byte, password string) (crypto.PrivateKey, []*x509.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return nil, nil, err
	}
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(password))
		if err != nil {
			return nil, nil, err
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, nil, err
		}
		var chain []*x509.Certificate
		for _, c := range e.CertificateChain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return nil, nil, err
			}
			chain = append(chain, cert)
		}
		return key, chain, nil
	}
	return nil, nil, errors.New("no private key entry")
}

// jksTrusted is every certificate of a Java key store.
func jksTrusted(data []byte, password string) ([]*x509.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(alias) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(alias)
		if err != nil {
			return nil, err
		}
		cert, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, err
		}
		out = append(out, cert)
	}
	return out, nil
}

// pemKey is a PEM key store: an unencrypted private key (PKCS#8, PKCS#1 or
// SEC 1) and its certificate chain, leaf first.
func pemKey(data []byte) (crypto.PrivateKey, []*x509.Certificate, error) {
	var key crypto.PrivateKey
	var chain []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, nil, err
			}
			chain = append(chain, c)
		case b.Type == "ENCRYPTED PRIVATE KEY":
			return nil, nil, errors.New("encrypted PEM private keys are not supported; use PKCS12 or JKS")
		case strings.HasSuffix(b.Type, "PRIVATE KEY") && key == nil:
			k, err := parseKey(b.Bytes)
			if err != nil {
				return nil, nil, err
			}
			key = k
		}
	}
	return key, chain, nil
}

func parseKey(der []byte) (crypto.PrivateKey, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("unrecognized private key")
}

// pemCerts is every certificate in a PEM file.
func pemCerts(data []byte) ([]*x509.Certificate, error) {
	_, certs, err := pemKey(data)
	return certs, err
}
