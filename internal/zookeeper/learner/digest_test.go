package learner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestTreeDigestOfZooKeeperSnapshots computes the digest of each snapshot
// ZooKeeper 3.8 wrote in datadir's golden data directory and finds the one
// ZooKeeper wrote after the tree (its ZxidDigest: ZooKeeper wrote these
// with no write in flight, so it is the tree's); a changed node changes
// it.
func TestTreeDigestOfZooKeeperSnapshots(t *testing.T) {
	dir := filepath.Join("..", "datadir", "testdata", "zk38", "version-2")
	for _, name := range []string{"snapshot.7", "snapshot.f", "snapshot.15"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := datadir.ReadSnapshot(b, 1)
		if err != nil {
			t.Fatal(err)
		}
		f, err := importer.FollowSnapshot(snap, znode.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// After the tree: the seal (a long and "/"), then ZxidDigest
		// {long zxid, int version, long digest} and its seal.
		tail := jute.NewReader(b[len(b)-(8+4+8)-(8+5):])
		tail.Long()
		version, digest := tail.Int(), tail.Long()
		if version != digestVersion {
			t.Fatalf("%s: digest version %d", name, version)
		}
		if got := TreeDigest(f.Tree()); got != digest {
			t.Errorf("%s: digest %#x, ZooKeeper's %#x", name, got, digest)
		}
		var set jute.Writer // SetDataTxn {path, data, version}
		set.String("/")
		set.Buffer([]byte("x"))
		set.Int(1)
		if err := f.Apply(datadir.Txn{ClientID: 5, Zxid: 1 << 40, Type: jute.OpSetData, Body: set.Buf}); err != nil || f.Settled != 0 {
			t.Fatalf("setData on /: %v, %v", err, f.Conflicts)
		}
		if TreeDigest(f.Tree()) == digest {
			t.Errorf("%s: a setData on / left the digest as it was", name)
		}
	}
}
