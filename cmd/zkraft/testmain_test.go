package main

import (
	"os"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// TestMain fails the run when a race-built zkraft process (ZKRAFT_RACE=1,
// make test-race) reported a data race, and stops the browser the console
// tests shared.
func TestMain(m *testing.M) {
	os.Exit(testenv.CollectingRaces(func() int {
		defer stopBrowser()
		return m.Run()
	}))
}
