package e2e

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// kazooChecksMin is the number of checks recipes.py prints when it runs to
// the end; fewer means it stopped early.
const kazooChecksMin = 57

// TestCompatKazoo runs testdata/compat/kazoo/recipes.py with Debian's
// python3-kazoo against zkraft and Apache ZooKeeper: the client basics,
// transactions, DataWatch/ChildrenWatch and one-shot watches, and the
// Lock, ReadLock/WriteLock, Semaphore, Election, Barrier,
// Counter, Queue, LockingQueue, Party and ShallowParty recipes.
func TestCompatKazoo(t *testing.T) {
	skipShort(t)
	t.Parallel()
	requireTool(t, needFiles(kazooPython))
	if out, err := runTool(t, time.Minute, "", kazooPython, "-c", "import kazoo"); err != nil {
		requireTool(t, errorString("python3-kazoo is not installed for "+kazooPython+": "+out))
	}
	script := filepath.Join(compatDir("kazoo"), "recipes.py")
	servers := compatServers(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	outs, errs := map[string]string{}, map[string]error{}
	for kind, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := runTool(t, 3*time.Minute, "", kazooPython, script, s.Addr, "/compat-kazoo")
			mu.Lock()
			outs[kind], errs[kind] = out, err
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, kind := range compatKinds() {
		checkReport(t, kind, outs[kind], errs[kind], kazooChecksMin)
	}
}
