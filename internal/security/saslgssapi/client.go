package saslgssapi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// ErrGSSAPI wraps every failure of the exchange: a ticket the KDC will
// not issue, a server that does not prove it holds the service key, a
// malformed or unexpected token.
var ErrGSSAPI = errors.New("sasl: GSSAPI")

// Security layers of RFC 4752's negotiation; only "none" is chosen.
const noSecurityLayer = 1

// Wrap token flags (RFC 4121 4.2.2).
const (
	flagSentByAcceptor = 0x01
	flagSealed         = 0x02
	flagAcceptorSubkey = 0x04
)

// Client is one SASL GSSAPI exchange. Start gives the initial response;
// each server challenge goes to Next until Complete.
type Client struct {
	krb     *client.Client
	spn     string // service/host
	authzID string

	step     int
	ticket   messages.Ticket
	session  types.EncryptionKey
	key      types.EncryptionKey // the context key: the acceptor's subkey if it sent one, else the session key
	subkey   bool                // key is the acceptor's subkey
	seq      uint64              // the initiator's sequence number (its authenticator's)
	ctime    time.Time
	cusec    int
	complete bool
}

// NewClient starts an exchange with krb (logged in) for the service
// principal service/host (the realm is the host's, from the Kerberos
// configuration, as Java maps a host-based service name); authzID is the
// authorization identity sent at the end ("" for none), which ZooKeeper's
// learners set to their own principal.
func NewClient(krb *client.Client, service, host, authzID string) *Client {
	return &Client{krb: krb, spn: service + "/" + host, authzID: authzID}
}

// Start returns the initial response: the GSS-API token of an AP-REQ for
// the service, asking for mutual authentication.
func (c *Client) Start() ([]byte, error) {
	if c.step != 0 {
		return nil, fmt.Errorf("%w: already started", ErrGSSAPI)
	}
	c.step = 1
	tkt, key, err := c.krb.GetServiceTicket(c.spn)
	if err != nil {
		return nil, fmt.Errorf("%w: service ticket for %s: %w", ErrGSSAPI, c.spn, err)
	}
	c.ticket, c.session, c.key = tkt, key, key
	auth, err := types.NewAuthenticator(c.krb.Credentials.Domain(), c.krb.Credentials.CName())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGSSAPI, err)
	}
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: gssChecksum(gssapi.ContextFlagMutual | gssapi.ContextFlagInteg | gssapi.ContextFlagConf)}
	c.seq, c.ctime, c.cusec = uint64(auth.SeqNumber), auth.CTime, auth.Cusec
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REQ: %w", ErrGSSAPI, err)
	}
	types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	// NewKRB5TokenAPREQ sets the token's framing; its own AP-REQ has an
	// authenticator this client cannot read back, so it is replaced.
	tok, err := spnego.NewKRB5TokenAPREQ(c.krb, tkt, key, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REQ: %w", ErrGSSAPI, err)
	}
	tok.APReq = req
	b, err := tok.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REQ: %w", ErrGSSAPI, err)
	}
	return b, nil
}

// gssChecksum is RFC 4121 4.1.1's authenticator checksum: no channel
// bindings, and the context flags.
func gssChecksum(contextFlags uint32) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b[:4], 16)
	binary.LittleEndian.PutUint32(b[20:], contextFlags)
	return b
}

// Next evaluates the server's challenge and returns the response: empty
// after the server's AP-REP, then the wrapped choice of no security
// layer, after which the exchange is Complete.
func (c *Client) Next(challenge []byte) ([]byte, error) {
	switch {
	case c.step == 1 && !isWrapToken(challenge):
		c.step = 2
		if err := c.checkAPRep(challenge); err != nil {
			return nil, err
		}
		return []byte{}, nil
	case c.step == 1 || c.step == 2:
		c.step = 3
		return c.negotiate(challenge)
	case c.step == 0:
		return nil, fmt.Errorf("%w: not started", ErrGSSAPI)
	}
	return nil, fmt.Errorf("%w: the server sent a token after the exchange ended", ErrGSSAPI)
}

// Complete reports whether the client has sent its last token.
func (c *Client) Complete() bool { return c.complete }

// isWrapToken tells an RFC 4121 wrap token (TOK_ID 05 04) from a
// GSS-API context token (which begins with the [APPLICATION 0] tag).
func isWrapToken(b []byte) bool { return len(b) >= 2 && b[0] == 0x05 && b[1] == 0x04 }

// checkAPRep verifies the server's AP-REP: it must decrypt with the
// session key and echo the authenticator's time, which proves the server
// holds the service key. An acceptor subkey in it becomes the context key.
func (c *Client) checkAPRep(b []byte) error {
	var tok spnego.KRB5Token
	if err := tok.Unmarshal(b); err != nil {
		return fmt.Errorf("%w: the server's context token: %w", ErrGSSAPI, err)
	}
	if tok.IsKRBError() {
		return fmt.Errorf("%w: the server refused the ticket: %s", ErrGSSAPI, tok.KRBError.Error())
	}
	if !tok.IsAPRep() {
		return fmt.Errorf("%w: the server's context token is not an AP-REP", ErrGSSAPI)
	}
	plain, err := crypto.DecryptEncPart(tok.APRep.EncPart, c.session, keyusage.AP_REP_ENCPART)
	if err != nil {
		return fmt.Errorf("%w: AP-REP: %w", ErrGSSAPI, err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		return fmt.Errorf("%w: AP-REP: %w", ErrGSSAPI, err)
	}
	if part.CTime.Unix() != c.ctime.Unix() || part.Cusec != c.cusec { // the wire time has whole seconds, and cusec
		return fmt.Errorf("%w: the AP-REP does not echo the authenticator's time", ErrGSSAPI)
	}
	if part.Subkey.KeyType != 0 && len(part.Subkey.KeyValue) > 0 {
		c.key, c.subkey = part.Subkey, true
	}
	return nil
}

// negotiate checks the server's wrapped offer of security layers and
// answers with the wrapped choice of none, with the authorization id.
func (c *Client) negotiate(b []byte) ([]byte, error) {
	offer, err := c.unwrap(b)
	if err != nil {
		return nil, err
	}
	if len(offer) != 4 {
		return nil, fmt.Errorf("%w: the server's security-layer offer has %d bytes, want 4", ErrGSSAPI, len(offer))
	}
	if offer[0]&noSecurityLayer == 0 {
		return nil, fmt.Errorf("%w: the server requires a security layer (offer %#x); only none is supported", ErrGSSAPI, offer[0])
	}
	choice := append([]byte{noSecurityLayer, 0, 0, 0}, c.authzID...)
	var fl byte
	if c.subkey {
		fl = flagAcceptorSubkey
	}
	wt := gssapi.WrapToken{Flags: fl, EC: 12, SndSeqNum: c.seq, Payload: choice}
	if et, err := crypto.GetEtype(c.key.KeyType); err == nil {
		wt.EC = uint16(et.GetHMACBitLength() / 8)
	}
	if err := wt.SetCheckSum(c.key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
		return nil, fmt.Errorf("%w: wrap: %w", ErrGSSAPI, err)
	}
	out, err := wt.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%w: wrap: %w", ErrGSSAPI, err)
	}
	c.complete = true
	return out, nil
}

// unwrap checks an acceptor's wrap token (integrity only, as ZooKeeper's
// servers send it) and returns its payload, undoing a right rotation
// (RRC) if any.
func (c *Client) unwrap(b []byte) ([]byte, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("%w: short wrap token", ErrGSSAPI)
	}
	if rrc := int(binary.BigEndian.Uint16(b[6:8])); rrc != 0 && len(b) > 16 {
		data := b[16:]
		rrc %= len(data)
		rot := append(append([]byte{}, data[rrc:]...), data[:rrc]...)
		b = append(append(append([]byte{}, b[:6]...), 0, 0), append(append([]byte{}, b[8:16]...), rot...)...)
	}
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(b, true); err != nil {
		return nil, fmt.Errorf("%w: wrap token: %w", ErrGSSAPI, err)
	}
	if wt.Flags&flagSealed != 0 {
		return nil, fmt.Errorf("%w: sealed wrap token (a security layer was not negotiated)", ErrGSSAPI)
	}
	key := c.key
	if wt.Flags&flagAcceptorSubkey == 0 {
		key = c.session
	}
	if ok, err := wt.Verify(key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, fmt.Errorf("%w: the server's wrap token does not verify: %v", ErrGSSAPI, err)
	}
	return wt.Payload, nil
}

// ServicePrincipal resolves ZooKeeper's quorum.auth.kerberos.servicePrincipal
// for a server at host (SecurityUtils.getServerPrincipal): "service/_HOST"
// (exactly two components, no realm) becomes "service/<host, lower case>";
// anything else is used as is. It returns the service and host parts
// (a realm, if any, dropped: the host's realm is found as Java finds it).
func ServicePrincipal(principal, host string) (service, hostPart string, err error) {
	if svc, h, ok := strings.Cut(principal, "/"); ok && h == "_HOST" {
		return svc, strings.ToLower(host), nil
	}
	name, _, _ := strings.Cut(principal, "@")
	svc, h, ok := strings.Cut(name, "/")
	if !ok || svc == "" || h == "" || strings.Contains(h, "/") {
		return "", "", fmt.Errorf("%w: service principal %q: want service/host or service/_HOST", ErrGSSAPI, principal)
	}
	return svc, h, nil
}
