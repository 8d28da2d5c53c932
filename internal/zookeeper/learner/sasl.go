package learner

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkraft/zkraft/internal/security/saslmd5"
	"github.com/zkraft/zkraft/jute"
)

// DigestCredentials are a quorum learner's SASL DIGEST-MD5 login: the
// username and password of the DigestLoginModule in ZooKeeper's JAAS
// QuorumLearner section, which the leader's QuorumServer section lists
// as user_<username>.
type DigestCredentials struct {
	User, Password string
}

// Quorum SASL (QuorumAuth.java): every QuorumAuthPacket {long magic, int
// status, buffer token} starts with quorumAuthMagic, which the leader
// peeks at to tell an authenticating learner from one that is not;
// DIGEST-MD5 runs with protocol "zookeeper-quorum" and server name
// "zk-quorum-sasl-md5".
const (
	quorumAuthMagic  int64 = 0x5f2435013501edcc // Java's -0xa0dbcafecafe1234L: the literal overflows to negative first
	quorumDigestURI        = "zookeeper-quorum/zk-quorum-sasl-md5"
	authInProgress   int32 = 0
	authSuccess      int32 = 1
	authError        int32 = -1
	maxAuthExchanges       = 5 // the leader's MAX_RETRIES
)

// errSASL: the quorum SASL exchange failed: the leader refused the
// credentials (a wrong password, an unknown user), or proved it does not
// know them. Like errTLS, a configuration error the operator must see.
var errSASL = errors.New("learner: quorum SASL authentication failed")

// saslClient is the learner's side of one quorum SASL mechanism.
type saslClient interface {
	// start returns the initial response.
	start() ([]byte, error)
	// next answers a challenge the leader sent with IN_PROGRESS.
	next(challenge []byte) ([]byte, error)
	// finish checks the token that came with SUCCESS.
	finish(token []byte) error
	// refused explains the leader's ERROR status.
	refused() string
}

// digestClient is DIGEST-MD5: an empty initial response, the response to
// the leader's challenge, and the check of its rspauth, which comes with
// SUCCESS.
type digestClient struct {
	cl   *saslmd5.Client
	user string
}

func newDigestClient(cred DigestCredentials) *digestClient {
	return &digestClient{cl: &saslmd5.Client{User: cred.User, Password: cred.Password, DigestURI: quorumDigestURI}, user: cred.User}
}

func (d *digestClient) start() ([]byte, error)         { return []byte{}, nil }
func (d *digestClient) next(ch []byte) ([]byte, error) { return d.cl.Respond(ch) }
func (d *digestClient) finish(token []byte) error      { return d.cl.Verify(token) }
func (d *digestClient) refused() string {
	return fmt.Sprintf("the leader refused user %q (check the QuorumLearner section's username and password against the leader's QuorumServer section)", d.user)
}

// authenticate runs the learner side of ZooKeeper's quorum SASL
// (SaslQuorumAuthLearner) with mech before the first QuorumPacket: the
// initial response, then a response to each IN_PROGRESS challenge until
// the leader's SUCCESS or ERROR.
func (c *conn) authenticate(mech saslClient) error {
	first, err := mech.start()
	if err != nil {
		return fmt.Errorf("%w with %s: %w", errSASL, c.addr, err)
	}
	if err := c.writeAuth(first); err != nil {
		return fmt.Errorf("%w: %w", errNotLeader, err)
	}
	for range maxAuthExchanges + 1 {
		status, token, err := c.readAuth()
		if err != nil {
			return err
		}
		switch status {
		case authSuccess:
			if err := mech.finish(token); err != nil {
				return fmt.Errorf("%w with %s: %w", errSASL, c.addr, err)
			}
			return nil
		case authInProgress:
			rsp, err := mech.next(token)
			if err != nil {
				return fmt.Errorf("%w with %s: %w", errSASL, c.addr, err)
			}
			if err := c.writeAuth(rsp); err != nil {
				return err
			}
		case authError:
			return fmt.Errorf("%w with %s: %s", errSASL, c.addr, mech.refused())
		default:
			return fmt.Errorf("%w with %s: status %d", errSASL, c.addr, status)
		}
	}
	return fmt.Errorf("%w with %s: the leader did not end the exchange", errSASL, c.addr)
}

// writeAuth sends a QuorumAuthPacket with status IN_PROGRESS, as the
// learner sends every token.
func (c *conn) writeAuth(token []byte) error {
	var jw jute.Writer
	jw.Long(quorumAuthMagic)
	jw.Int(authInProgress)
	jw.Buffer(token)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.l.cfg.SyncTimeout))
	if _, err := c.out.Write(jw.Buf); err != nil {
		return fmt.Errorf("learner: quorum SASL: %w", err)
	}
	if err := c.out.Flush(); err != nil {
		return fmt.Errorf("learner: quorum SASL: %w", err)
	}
	return nil
}

// readAuth reads the leader's QuorumAuthPacket. A connection closed
// instead is errNotLeader (a server whose quorum SASL is off reads the
// learner's packet as a bad QuorumPacket and closes), or errTLS when it is
// the leader's TLS alert.
func (c *conn) readAuth() (int32, []byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.l.cfg.InitTimeout))
	s := c.in
	magic, status, token := s.Long(), s.Int(), s.Buffer()
	if err := s.Err(); err != nil {
		if tlsRefused(err) {
			return 0, nil, fmt.Errorf("%w with %s: %w", errTLS, c.addr, err)
		}
		return 0, nil, fmt.Errorf("%w: quorum SASL: %w", errNotLeader, err)
	}
	if magic != quorumAuthMagic {
		return 0, nil, fmt.Errorf("%w with %s: the server answered with %#x, not a quorum auth packet", errSASL, c.addr, magic)
	}
	return status, token, nil
}

// logSASL logs a quorum SASL failure with addr, once per server and
// failure as logTLS does.
func (l *Learner) logSASL(addr string, err error) {
	l.logOnce(addr, err, "learner: cannot follow: quorum SASL authentication failed (check the JAAS QuorumLearner section and quorum.auth.*)",
		"learner: quorum SASL authentication failed")
}
