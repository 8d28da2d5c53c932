// Package zktlstest makes certificates and PEM stores for tests of TLS
// client ports and member connections, as httptest does for HTTP.
package zktlstest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Issued is a private key and its certificate.
type Issued struct {
	Key  *ecdsa.PrivateKey
	Cert *x509.Certificate
}

var serial atomic.Int64

// Issue makes a certificate for subject valid for an hour, for 127.0.0.1
// and localhost, usable by servers and clients, signed by ca (self-signed
// when ca is nil). isCA makes it an authority.
func Issue(subject pkix.Name, ca *Issued, isCA bool) (Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano() + serial.Add(1)),
		Subject:               subject,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  isCA,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.Cert, ca.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return Issued{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Issued{}, err
	}
	return Issued{key, cert}, nil
}

// WritePEM writes key (if any) and certs to path as a PEM store.
func WritePEM(path string, key *ecdsa.PrivateKey, certs ...*x509.Certificate) error {
	var b bytes.Buffer
	if key != nil {
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		_ = pem.Encode(&b, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// PEMStores makes an authority and a certificate for subject signed by
// it, and writes dir/keystore.pem (key and chain) and dir/truststore.pem
// (the authority).
func PEMStores(dir string, subject pkix.Name) (keyStore, trustStore string, err error) {
	ca, err := Issue(pkix.Name{CommonName: "zkraft test CA"}, nil, true)
	if err != nil {
		return "", "", err
	}
	leaf, err := Issue(subject, &ca, false)
	if err != nil {
		return "", "", err
	}
	keyStore, trustStore = filepath.Join(dir, "keystore.pem"), filepath.Join(dir, "truststore.pem")
	if err := WritePEM(keyStore, leaf.Key, leaf.Cert, ca.Cert); err != nil {
		return "", "", fmt.Errorf("zktlstest: %w", err)
	}
	if err := WritePEM(trustStore, nil, ca.Cert); err != nil {
		return "", "", fmt.Errorf("zktlstest: %w", err)
	}
	return keyStore, trustStore, nil
}
