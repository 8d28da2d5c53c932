package learner

import (
	"bufio"
	"encoding/binary"
	"fmt"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
)

// Quorum packet types (Leader.java).
const (
	pktRequest           = 1
	pktProposal          = 2
	pktAck               = 3
	pktCommit            = 4
	pktPing              = 5
	pktRevalidate        = 6
	pktSync              = 7
	pktInform            = 8
	pktCommitAndActivate = 9
	pktNewLeader         = 10
	pktFollowerInfo      = 11
	pktUpToDate          = 12
	pktDiff              = 13
	pktTrunc             = 14
	pktSnap              = 15
	pktObserverInfo      = 16
	pktLeaderInfo        = 17
	pktAckEpoch          = 18
	pktInformAndActivate = 19
)

// protocolVersion is Zab 1.0's, which LearnerInfo and LEADERINFO carry.
const protocolVersion = 0x10000

// packet is a QuorumPacket {int type, long zxid, buffer data,
// vector<Id> authinfo}. On a quorum connection packets follow each other
// with no length before them.
type packet struct {
	typ  int32
	zxid int64
	data []byte
	auth []jute.Id
}

// readPacket reads the next packet.
func readPacket(s *datadir.StreamReader) (packet, error) {
	p := packet{typ: s.Int(), zxid: s.Long(), data: s.Buffer(), auth: s.Ids()}
	if err := s.Err(); err != nil {
		return packet{}, fmt.Errorf("learner: reading a packet: %w", err)
	}
	return p, nil
}

// writePacket writes p and flushes it.
func writePacket(w *bufio.Writer, p packet) error {
	var jw jute.Writer
	jw.Int(p.typ)
	jw.Long(p.zxid)
	jw.Buffer(p.data)
	if p.auth == nil {
		jw.Int(-1)
	} else {
		jw.Int(int32(len(p.auth)))
		for i := range p.auth {
			p.auth[i].Encode(&jw)
		}
	}
	if _, err := w.Write(jw.Buf); err != nil {
		return fmt.Errorf("learner: writing a packet: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("learner: writing a packet: %w", err)
	}
	return nil
}

// learnerInfo is LearnerInfo {long serverid, int protocolVersion, long
// configVersion}, OBSERVERINFO's data.
func learnerInfo(id int64, configVersion int64) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(id))
	b = binary.BigEndian.AppendUint32(b, protocolVersion)
	return binary.BigEndian.AppendUint64(b, uint64(configVersion))
}

// parseTxn reads a PROPOSAL's or INFORM's data: a TxnHeader {long
// clientId, int cxid, long zxid, long time, int type}, then the
// transaction's record and, from ZooKeeper 3.6 on, its TxnDigest, the
// same bytes a transaction log record holds.
func parseTxn(data []byte) (datadir.Txn, error) {
	r := jute.NewReader(data)
	t := datadir.Txn{ClientID: r.Long(), Cxid: r.Int(), Zxid: r.Long(), Time: r.Long(), Type: jute.Op(r.Int())}
	if err := r.Err(); err != nil {
		return datadir.Txn{}, fmt.Errorf("learner: transaction header: %w", err)
	}
	t.Body = data[r.Offset():]
	return t, nil
}

// epochOf and makeZxid split and join a zxid's epoch (high 32 bits) and
// counter (ZxidUtils).
func epochOf(zxid int64) int64 { return int64(uint64(zxid) >> 32) }

func makeZxid(epoch int64, counter int64) int64 { return epoch<<32 | counter&0xffffffff }
