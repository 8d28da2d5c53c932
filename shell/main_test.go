package shell

import (
	"os"
	"testing"

	"github.com/urfave/cli/v2"
)

// execEnv makes the test binary act as the zkraft binary: tests re-execute
// themselves with it set to run "zkraft shell ..." in a real process (pipes
// or a pseudo-terminal), without owning cmd/zkraft.
const execEnv = "ZKRAFT_SHELL_TEST_EXEC"

func TestMain(m *testing.M) {
	if os.Getenv(execEnv) == "1" {
		app := &cli.App{Name: "zkraft", Commands: []*cli.Command{Command()}}
		if err := app.Run(append([]string{"zkraft"}, os.Args[1:]...)); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	stopTestServer()
	os.Exit(code)
}
