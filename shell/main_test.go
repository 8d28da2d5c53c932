package shell

import (
	"fmt"
	"os"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliargs"
)

// execEnv makes the test binary act as the zkraft binary: tests re-execute
// themselves with it set to run "zkraft shell ..." in a real process (pipes
// or a pseudo-terminal), without owning cmd/zkraft.
const execEnv = "ZKRAFT_SHELL_TEST_EXEC"

func TestMain(m *testing.M) {
	if os.Getenv(execEnv) == "1" {
		app := &cli.App{Name: "zkraft", Commands: []*cli.Command{Command()}}
		args := cliargs.Reorder(app.Commands, append([]string{"zkraft"}, os.Args[1:]...), "shell")
		if err := app.Run(args); err != nil {
			fmt.Fprintln(os.Stderr, "zkraft:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	stopTestServer()
	os.Exit(code)
}
