package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Kerberos configures SASL GSSAPI: ZooKeeper's JAAS Server section with
// com.sun.security.auth.module.Krb5LoginModule (useKeyTab, keyTab,
// principal). A client is authenticated as its Kerberos principal.
type Kerberos struct {
	// Keytab holds the service's keys (zookeeper/<host>@<REALM>).
	Keytab *keytab.Keytab
	// Principal is the service principal, "zookeeper/host@REALM"; its
	// realm is the default realm of ZooKeeper's short-name rule.
	Principal string
	// RemoveHost and RemoveRealm drop the instance ("/host") and the
	// realm from the sasl identity (zoo.cfg
	// kerberos.removeHostFromPrincipal, kerberos.removeRealmFromPrincipal).
	RemoveHost, RemoveRealm bool
}

// gssapiServer is the server side of one connection's SASL GSSAPI
// exchange (RFC 4752) with Kerberos V5 (RFC 4121), as Java's GssKrb5Server
// runs it for ZooKeeper: the client's AP-REQ is answered with an AP-REP
// (mutual authentication); the client's empty response with the wrapped
// security-layer offer (no security layer: ZooKeeper's qop is auth); the
// client's wrapped choice ends it, and the client is its principal.
type gssapiServer struct {
	krb  *Kerberos
	step int
	key  types.EncryptionKey // the context key: the initiator's subkey, else the ticket's session key
	seq  uint64              // the acceptor's first sequence number (the initiator's, from its authenticator)
	peer string              // the client principal, name@REALM
	user string              // the sasl identity once done
}

var errGSSAPI = errors.New("sasl: GSSAPI authentication failed")

// Security layers of RFC 4752's offer; ZooKeeper negotiates none.
const gssNoSecurityLayer = 1

// next evaluates a client token and returns the server's token; done is
// set when the client is authenticated (the last token is then nil, which
// ZooKeeper's client expects of GSSAPI).
func (g *gssapiServer) next(token []byte) ([]byte, bool, error) {
	switch g.step {
	case 0:
		g.step = 1
		rep, err := g.accept(token)
		return rep, false, err
	case 1:
		if len(token) != 0 {
			return nil, false, fmt.Errorf("%w: unexpected token after the context", errGSSAPI)
		}
		g.step = 2
		offer := []byte{gssNoSecurityLayer, 0, 0, 0}
		wt := gssapi.WrapToken{Flags: 0x01, EC: 12, SndSeqNum: g.seq, Payload: offer} // sent by the acceptor, not sealed
		if et, err := crypto.GetEtype(g.key.KeyType); err == nil {
			wt.EC = uint16(et.GetHMACBitLength() / 8)
		}
		if err := wt.SetCheckSum(g.key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
			return nil, false, fmt.Errorf("%w: wrap: %w", errGSSAPI, err)
		}
		b, err := wt.Marshal()
		if err != nil {
			return nil, false, fmt.Errorf("%w: wrap: %w", errGSSAPI, err)
		}
		return b, false, nil
	case 2:
		g.step = 3
		payload, err := unwrapInitiator(token, g.key)
		if err != nil {
			return nil, false, err
		}
		if len(payload) < 4 || payload[0] != gssNoSecurityLayer {
			return nil, false, fmt.Errorf("%w: the client chose a security layer (%x) this server does not offer", errGSSAPI, payload)
		}
		g.user = g.identity()
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("%w: exchange already over", errGSSAPI)
}

// accept verifies the client's initial context token (an AP-REQ for the
// service) with the key table and returns the AP-REP token.
func (g *gssapiServer) accept(token []byte) ([]byte, error) {
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(token); err != nil || !kt.IsAPReq() {
		return nil, fmt.Errorf("%w: not a Kerberos AP-REQ token: %v", errGSSAPI, err)
	}
	settings := service.NewSettings(g.krb.Keytab, service.DecodePAC(false), service.MaxClockSkew(5*time.Minute))
	ok, creds, err := service.VerifyAPREQ(&kt.APReq, settings)
	if err != nil || !ok {
		return nil, fmt.Errorf("%w: %v", errGSSAPI, err)
	}
	g.peer = creds.CName().PrincipalNameString() + "@" + creds.Realm()
	session := kt.APReq.Ticket.DecryptedEncPart.Key
	g.key = session
	auth := kt.APReq.Authenticator
	g.seq = uint64(auth.SeqNumber)
	if auth.SubKey.KeyType != 0 && len(auth.SubKey.KeyValue) > 0 {
		g.key = auth.SubKey
	}
	if !types.IsFlagSet(&kt.APReq.APOptions, flags.APOptionMutualRequired) {
		return []byte{}, nil
	}
	return apRepToken(auth, session, kt.OID)
}

// encAPRepPart and apRep are RFC 4120's EncAPRepPart and KRB_AP_REP for
// marshalling (gokrb5 only parses them).
type encAPRepPart struct {
	CTime  time.Time `asn1:"generalized,explicit,tag:0"`
	Cusec  int       `asn1:"explicit,tag:1"`
	SeqNum int64     `asn1:"optional,explicit,tag:3"`
}

type apRep struct {
	PVNO    int                 `asn1:"explicit,tag:0"`
	MsgType int                 `asn1:"explicit,tag:1"`
	EncPart types.EncryptedData `asn1:"explicit,tag:2"`
}

// apRepToken is the GSS-API token of the AP-REP that proves the server
// to the client: the authenticator's time, encrypted with the session key.
func apRepToken(auth types.Authenticator, session types.EncryptionKey, oid asn1.ObjectIdentifier) ([]byte, error) {
	// The acceptor's sequence numbers start where the initiator's do (its
	// authenticator's), stated in the AP-REP: Java's initiator otherwise
	// takes a gap for a lost token.
	part, err := asn1.Marshal(encAPRepPart{CTime: auth.CTime, Cusec: auth.Cusec, SeqNum: auth.SeqNumber})
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REP: %w", errGSSAPI, err)
	}
	enc, err := crypto.GetEncryptedData(asn1tools.AddASNAppTag(part, asnAppTag.EncAPRepPart), session, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REP: %w", errGSSAPI, err)
	}
	rep, err := asn1.Marshal(apRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: enc})
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REP: %w", errGSSAPI, err)
	}
	mechOID, _ := asn1.Marshal(oid)
	inner := append(append(mechOID, 0x02, 0x00), asn1tools.AddASNAppTag(rep, asnAppTag.APREP)...)
	return asn1tools.AddASNAppTag(inner, 0), nil
}

// unwrapInitiator checks an initiator's RFC 4121 wrap token (not sealed)
// and returns its payload, undoing a right rotation (RRC) if any.
func unwrapInitiator(b []byte, key types.EncryptionKey) ([]byte, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("%w: short wrap token", errGSSAPI)
	}
	if rrc := int(binary.BigEndian.Uint16(b[6:8])); rrc != 0 {
		data := b[16:]
		if len(data) > 0 {
			rrc %= len(data)
			rotated := append(append([]byte{}, data[rrc:]...), data[:rrc]...)
			b = append(append(append([]byte{}, b[:6]...), 0, 0), append(b[8:16:16], rotated...)...)
		}
	}
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(b, false); err != nil {
		return nil, fmt.Errorf("%w: wrap token: %w", errGSSAPI, err)
	}
	if wt.Flags&0x02 != 0 {
		return nil, fmt.Errorf("%w: sealed wrap token", errGSSAPI)
	}
	if ok, err := wt.Verify(key, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
		return nil, fmt.Errorf("%w: wrap token: %v", errGSSAPI, err)
	}
	return wt.Payload, nil
}

// identity is the sasl identity of the client principal as ZooKeeper's
// SaslServerCallbackHandler makes it: the short name (the first component,
// for the service's realm; ZooKeeper's DEFAULT rule), then "/host" and
// "@REALM" unless removed.
func (g *gssapiServer) identity() string {
	name, realm, _ := strings.Cut(g.peer, "@")
	primary, host, hasHost := strings.Cut(name, "/")
	_, svcRealm, _ := strings.Cut(g.krb.Principal, "@")
	if realm != svcRealm {
		return g.peer // no rule applies: ZooKeeper keeps the authorization id, the principal
	}
	id := primary
	if hasHost && !g.krb.RemoveHost {
		id += "/" + host
	}
	if !g.krb.RemoveRealm {
		id += "@" + realm
	}
	return id
}
