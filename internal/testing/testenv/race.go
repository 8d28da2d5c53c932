package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// RaceBinaries reports whether tests that build the zkraft binary should
// build it with the race detector (ZKRAFT_RACE=1, as make test-race sets).
func RaceBinaries() bool { return os.Getenv("ZKRAFT_RACE") == "1" }

// BuildFlags is the extra go build flags for a zkraft binary under test:
// -race when RaceBinaries.
func BuildFlags() []string {
	if RaceBinaries() {
		return []string{"-race"}
	}
	return nil
}

// CollectRaces makes every race-built process this test binary starts from
// now on write its data race reports under dir (through GORACE, which child
// processes inherit).
func CollectRaces(dir string) error {
	return os.Setenv("GORACE", "log_path="+filepath.Join(dir, "race"))
}

// RaceReports returns the reports collected under dir, one per process
// that found a data race, by file name.
func RaceReports(dir string) map[string]string {
	logs, _ := filepath.Glob(filepath.Join(dir, "race.*"))
	out := make(map[string]string, len(logs))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			b = []byte(err.Error())
		}
		out[l] = string(b)
	}
	return out
}

// RunCollectingRaces is a TestMain body for packages whose tests start
// zkraft processes: it runs m and, when RaceBinaries, fails the run on any
// data race those processes reported, printing the reports.
func RunCollectingRaces(m *testing.M) int { return CollectingRaces(m.Run) }

// CollectingRaces runs run (a TestMain's body, which must stop every zkraft
// process it started before it returns) and, when RaceBinaries, turns its
// exit code into a failure if any of those processes reported a data race.
func CollectingRaces(run func() int) int {
	if !RaceBinaries() {
		return run()
	}
	dir, err := os.MkdirTemp("", "zkraft-race-")
	if err == nil {
		err = CollectRaces(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "race logs:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	code := run()
	for name, text := range RaceReports(dir) {
		fmt.Fprintf(os.Stderr, "FAIL: data race report %s:\n%s\n", name, text)
		code = 1
	}
	return code
}
