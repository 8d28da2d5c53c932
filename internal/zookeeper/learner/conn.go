package learner

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
)

// errNotLeader: the server refused the connection or closed it before
// LEADERINFO, as every server but the leader does.
var errNotLeader = errors.New("learner: not the leader")

// snapSignature ends a SNAP's snapshot (LearnerHandler).
const snapSignature = "BenWasHere"

// conn is one connection to a leader.
type conn struct {
	l    *Learner
	addr string
	nc   net.Conn
	in   *datadir.StreamReader
	// wmu serializes writes (PING replies, requests).
	wmu sync.Mutex
	out *bufio.Writer
}

// follow connects to addr and, if it leads, syncs with it and applies its
// stream until the connection fails or ctx ends.
func (l *Learner) follow(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: l.cfg.DialTimeout}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: %w", errNotLeader, err)
	}
	defer raw.Close()
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	nc := raw
	if l.cfg.TLS != nil {
		if nc, err = l.tlsClient(ctx, raw, addr); err != nil {
			return err
		}
	}
	c := &conn{l: l, addr: addr, nc: nc, in: datadir.NewStreamReader(bufio.NewReaderSize(nc, 64<<10)), out: bufio.NewWriter(nc)}
	switch {
	case l.cfg.Kerberos != nil:
		if err := c.authenticate(newGSSAPIClient(l, addr)); err != nil {
			return err
		}
	case l.cfg.SASL != nil:
		if err := c.authenticate(newDigestClient(*l.cfg.SASL)); err != nil {
			return err
		}
	}
	newEpoch, err := c.handshake()
	if err != nil {
		return err
	}
	l.log.Info("learner: following the leader", zap.String("leader", addr), zap.Int64("epoch", newEpoch))
	if err := c.sync(newEpoch); err != nil {
		return err
	}
	return c.stream()
}

func (c *conn) write(p packet) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.l.cfg.SyncTimeout))
	return writePacket(c.out, p)
}

func (c *conn) read(timeout time.Duration) (packet, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(timeout))
	return readPacket(c.in)
}

// handshake registers as an observer (Learner.registerWithLeader):
// OBSERVERINFO with the accepted epoch and LearnerInfo, then the leader's
// LEADERINFO with its new epoch, answered by ACKEPOCH with the last zxid
// held and the current epoch (-1 if the epoch was accepted already). It
// returns the leader's epoch.
func (c *conn) handshake() (int64, error) {
	l := c.l
	l.mu.RLock()
	accepted, current, last := l.acceptedEpoch, l.currentEpoch, l.f.Tree().LastZxid()
	l.mu.RUnlock()
	err := c.write(packet{typ: pktObserverInfo, zxid: makeZxid(accepted, 0), data: learnerInfo(l.cfg.ID, 0)})
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errNotLeader, err)
	}
	p, err := c.read(l.cfg.InitTimeout)
	if err != nil && tlsRefused(err) {
		return 0, fmt.Errorf("%w with %s: %w", errTLS, c.addr, err)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errNotLeader, err)
	}
	if p.typ != pktLeaderInfo {
		return 0, fmt.Errorf("learner: the leader answered OBSERVERINFO with packet type %d, not LEADERINFO", p.typ)
	}
	newEpoch := epochOf(p.zxid)
	var ack int32
	switch {
	case newEpoch > accepted:
		ack = int32(current)
		l.mu.Lock()
		l.acceptedEpoch = newEpoch
		l.mu.Unlock()
	case newEpoch == accepted:
		ack = -1
	default:
		return 0, fmt.Errorf("learner: the leader's epoch %d is below the accepted epoch %d", newEpoch, accepted)
	}
	err = c.write(packet{typ: pktAckEpoch, zxid: last, data: binary.BigEndian.AppendUint32(nil, uint32(ack))})
	return newEpoch, err
}

// sync receives the leader's sync (Learner.syncWithLeader): DIFF (the
// transactions after our last zxid follow), SNAP (a snapshot replaces the
// tree) or TRUNC (we hold transactions the leader does not: the tree is
// dropped and the next connection starts from nothing); then PROPOSAL and
// COMMIT pairs and INFORMs, applied in order, NEWLEADER (acknowledged)
// and UPTODATE (acknowledged with the epoch's first zxid).
func (c *conn) sync(newEpoch int64) error {
	l := c.l
	p, err := c.read(l.cfg.InitTimeout)
	if err != nil {
		return err
	}
	var kind SyncKind
	switch p.typ {
	case pktDiff:
		kind = SyncDiff
	case pktSnap:
		kind = SyncSnap
		snap, err := datadir.ReadSnapshotBody(c.in, p.zxid)
		if err != nil {
			return fmt.Errorf("learner: SNAP: %w", err)
		}
		if sig := c.in.String(); c.in.Err() != nil || sig != snapSignature {
			return fmt.Errorf("learner: SNAP: signature %q, want %q (%v)", sig, snapSignature, c.in.Err())
		}
		l.mu.Lock()
		if l.stopping() {
			// A SNAP would replace the tree with one past the stop.
			l.stopLocked()
			l.mu.Unlock()
			return fmt.Errorf("learner: SNAP while stopping: %w", ErrStopped)
		}
		l.mu.Unlock()
		f, err := importer.FollowSnapshot(snap, l.cfg.Options)
		if err != nil {
			return fmt.Errorf("learner: SNAP: %w", err)
		}
		l.mu.Lock()
		l.f = f
		l.status.LastZxid = f.Tree().LastZxid()
		l.status.Replaced++
		l.notify()
		l.mu.Unlock()
	case pktTrunc:
		kind = SyncTrunc
		l.mu.Lock()
		last := l.f.Tree().LastZxid()
		if p.zxid != last && l.stopping() {
			l.stopLocked()
			l.mu.Unlock()
			return fmt.Errorf("learner: TRUNC while stopping: %w", ErrStopped)
		}
		if p.zxid != last {
			// A tree cannot be rolled back: start over from nothing.
			l.f = importer.NewFollower(l.cfg.Options)
			l.status.LastZxid = 0
			l.status.Replaced++
			l.notify()
			l.mu.Unlock()
			return fmt.Errorf("learner: TRUNC to %#x from %#x: the tree is dropped, resyncing from zxid 0", p.zxid, last)
		}
		l.mu.Unlock()
	default:
		return fmt.Errorf("learner: the leader began the sync with packet type %d", p.typ)
	}
	l.log.Info("learner: syncing", zap.String("kind", string(kind)), zap.String("zxid", fmt.Sprintf("%#x", p.zxid)))
	var proposals []datadir.Txn
	for {
		p, err := c.read(l.cfg.InitTimeout)
		if err != nil {
			return err
		}
		switch p.typ {
		case pktProposal:
			t, err := parseTxn(p.data)
			if err != nil {
				return err
			}
			proposals = append(proposals, t)
		case pktCommit, pktCommitAndActivate:
			if len(proposals) == 0 || proposals[0].Zxid != p.zxid {
				l.log.Warn("learner: a COMMIT without its PROPOSAL", zap.String("zxid", fmt.Sprintf("%#x", p.zxid)))
				continue
			}
			if err := l.apply(proposals[0]); err != nil {
				return err
			}
			proposals = proposals[1:]
		case pktInform, pktInformAndActivate:
			if err := c.inform(p); err != nil {
				return err
			}
		case pktNewLeader:
			l.mu.Lock()
			l.currentEpoch = newEpoch
			l.mu.Unlock()
			if err := c.write(packet{typ: pktAck, zxid: p.zxid}); err != nil {
				return err
			}
		case pktUpToDate:
			if err := c.write(packet{typ: pktAck, zxid: makeZxid(newEpoch, 0)}); err != nil {
				return err
			}
			l.mu.Lock()
			l.status.Leader, l.status.Synced, l.status.Epoch = c.addr, true, newEpoch
			l.cur = c
			l.status.LastSync = kind
			l.status.Syncs++
			l.notify()
			l.mu.Unlock()
			l.log.Info("learner: up to date", zap.String("kind", string(kind)), zap.String("zxid", fmt.Sprintf("%#x", l.Status().LastZxid)))
			return nil
		}
	}
}

// inform applies an INFORM's transaction; an INFORMANDACTIVATE's data
// begins with the suggested leader's id.
func (c *conn) inform(p packet) error {
	data := p.data
	if p.typ == pktInformAndActivate {
		if len(data) < 8 {
			return fmt.Errorf("learner: INFORMANDACTIVATE of %d bytes", len(data))
		}
		data = data[8:]
	}
	t, err := parseTxn(data)
	if err != nil {
		return err
	}
	return c.l.apply(t)
}

// stream applies the leader's INFORMs and answers its PINGs
// (Observer.processPacket) until the connection fails.
func (c *conn) stream() error {
	l := c.l
	for {
		p, err := c.read(l.cfg.SyncTimeout)
		if err != nil {
			return err
		}
		switch p.typ {
		case pktPing:
			if err := c.write(packet{typ: pktPing, zxid: p.zxid, data: c.touches(), auth: p.auth}); err != nil {
				return err
			}
		case pktInform, pktInformAndActivate:
			if err := c.inform(p); err != nil {
				return err
			}
		case pktRevalidate:
			if err := l.fw.revalidated(p.data); err != nil {
				return err
			}
		case pktSync:
			l.mu.RLock()
			l.fw.synced(l.f.Tree())
			l.mu.RUnlock()
		}
	}
}

// touches encodes the PING reply's session table: (long id, int
// timeout) pairs, never null: the leader reads it unchecked.
func (c *conn) touches() []byte {
	b := []byte{}
	for id, timeout := range c.l.fw.touches() {
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint32(b, uint32(timeout))
	}
	return b
}
