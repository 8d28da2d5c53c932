package shell

import (
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/operator"
	zksession "github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

// TestGoldenTranscriptsOnZkraft runs the transcripts recorded from zkCli
// against Apache ZooKeeper once more with zkraft as the server: zkCli and
// our shell must both print exactly what zkCli printed against ZooKeeper.
func TestGoldenTranscriptsOnZkraft(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every transcript through zkCli once more")
	}
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 2 * time.Second, Tree: znode.Options{ExtendedTypes: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := zksession.New(zksession.Config{TickTime: 2 * time.Second, FourLetter: operator.FourLetter{}, FourLetterWhitelist: []string{"*"}}, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); node.Close() }) // the transcripts run as parallel subtests, after this returns
	runGoldenTranscripts(t, ln.Addr().String())
}
