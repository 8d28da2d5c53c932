package shell

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Command returns the "zkraft shell" command: a zkCli.sh-compatible client.
//
//	zkraft shell -server host:port[,host:port...] [-timeout ms] [command args...]
//
// With a command it runs that one command and exits with its status (0 ok,
// 1 failed, 127 unknown command), like "zkCli.sh -server X get /a". Without
// one it reads commands from stdin: interactively, with line editing,
// history and completion, when stdin is a terminal; one per line, without
// prompts, otherwise.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "shell",
		Usage:     "interactive ZooKeeper shell compatible with zkCli.sh",
		ArgsUsage: "[command args...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Value: "localhost:2181", Usage: "connect string host:port[,host:port...]"},
			&cli.IntFlag{Name: "timeout", Value: 30000, Usage: "session timeout in milliseconds"},
			&cli.BoolFlag{Name: "r", Usage: "read-only session (accepted for zkCli compatibility; ignored)"},
			&cli.BoolFlag{Name: "waitforconnection", Usage: "wait for the session before running commands"},
			&cli.StringFlag{Name: "client-configuration", Usage: "zkCli's client properties file: zookeeper.client.secure=true with zookeeper.ssl.keyStore.*/trustStore.* connects over TLS"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output format of read commands: text or json"},
			&cli.StringFlag{Name: "history-file", Usage: "interactive history file (default ~/.zkraft_history)"},
		},
		Action: func(c *cli.Context) error {
			var tlsCfg *tls.Config
			if path := c.String("client-configuration"); path != "" {
				cfg, err := LoadClientConfiguration(path)
				if err != nil {
					return cli.Exit(err.Error(), exitFailed)
				}
				tlsCfg = cfg
			}
			opts := Options{
				TLS:               tlsCfg,
				Server:            c.String("server"),
				Timeout:           time.Duration(c.Int("timeout")) * time.Millisecond,
				ReadOnly:          c.Bool("r"),
				WaitForConnection: c.Bool("waitforconnection"),
				Output:            c.String("output"),
			}
			code := Run(opts, c.Args().Slice(), c.String("history-file"), c.App.Reader, c.App.Writer, c.App.ErrWriter)
			if code != 0 {
				return cli.Exit("", code)
			}
			return nil
		},
	}
}

// isTerminal reports whether f is an *os.File on a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// Run runs the shell as ZooKeeperMain.run does and returns the exit status.
// args is the one command to run; when empty, commands come from in.
func Run(opts Options, args []string, historyFile string, in io.Reader, out, errw io.Writer) int {
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	if errw == nil {
		errw = os.Stderr
	}
	opts.Terminal = opts.Terminal || isTerminal(out)
	s := New(opts, out, errw)
	s.printf("Connecting to %s\n", opts.Server)
	if err := s.connect(opts.Server); err != nil {
		var ce *cliError
		if errors.As(err, &ce) {
			s.eprintf("%s\n", ce.msg)
			return ce.code
		}
		s.eprintf("%v\n", err)
		return exitFailed
	}
	defer s.Close()
	if len(args) > 0 {
		_ = s.RunCommand(args)
		return s.ExitCode()
	}
	s.printf("Welcome to ZooKeeper!\n")
	if isTerminal(in) && isTerminal(out) {
		s.printf("JLine support is enabled\n")
		if err := s.interactive(historyFile); err != nil {
			s.eprintf("%v\n", err)
		}
		return s.ExitCode()
	}
	s.printf("JLine support is disabled\n")
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		if errors.Is(s.ExecuteLine(sc.Text()), errQuit) {
			break
		}
	}
	if err := sc.Err(); err != nil {
		s.eprintf("%s\n", fmt.Errorf("read commands: %w", err))
	}
	return s.ExitCode()
}
