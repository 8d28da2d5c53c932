package main

import (
	"os"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestMain removes the zkraft binary the tests built and, under
// ZKRAFT_RACE=1 (make test-race), fails the run on a data race any of
// the zkraft processes reported.
func TestMain(m *testing.M) { os.Exit(procs.RunTests(m)) }
