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

	"github.com/zkraft/zkraft/internal/cli/cliflags"
)

// Command returns the "zkraft shell" command: a zkCli.sh-compatible client.
//
//	zkraft shell --server host:port[,host:port...] [--timeout 30s] [command args...]
//
// With a command it runs that one command and exits with its status (0 ok,
// 1 failed, 127 unknown command), like "zkCli.sh -server X get /a". Without
// one it reads commands from --file or stdin: interactively, with line
// editing, history and completion, when stdin is a terminal; one per line,
// without prompts, otherwise.
func Command() *cli.Command {
	flags := []cli.Flag{
		cliflags.Server("localhost:2181", "connect string host:port[,host:port...][/chroot]"),
	}
	flags = append(flags, cliflags.Timeout(30*time.Second, "session timeout")...)
	flags = append(flags, cliflags.Output("output format of read commands: text or json (json: stdout carries JSON alone, one document a line)")...)
	flags = append(flags,
		cliflags.Auth(""),
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no banner and no connection events (watch notifications stay)"},
		&cli.BoolFlag{Name: "stop-on-error", Aliases: []string{"e"}, Usage: "stop at the first failing command (\"Not connected\" included) and exit with its status"},
		&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read commands from this file, one a line (- = stdin)"},
		&cli.BoolFlag{Name: "r", Usage: "read-only session (accepted for zkCli compatibility; ignored)"},
		&cli.BoolFlag{Name: "waitforconnection", Usage: "wait for the session before running commands"},
		&cli.StringFlag{Name: "client-configuration", Usage: "zkCli's client properties file: zookeeper.client.secure=true with zookeeper.ssl.keyStore.*/trustStore.* connects over TLS"},
		&cli.StringFlag{Name: "history-file", Usage: "interactive history file (default ~/.zkraft_history)"},
	)
	return &cli.Command{
		Name:      "shell",
		Usage:     "interactive ZooKeeper shell compatible with zkCli.sh",
		ArgsUsage: "[command args...]",
		Description: "Runs one command given as arguments, else the commands of --file or stdin.\n" +
			"Exit status: 0 when the command (the last one, or with --stop-on-error every one)\n" +
			"succeeded; 1 when it failed (or the connection or --auth did); 127 for an unknown\n" +
			"command. Credentials come from --auth and from $" + cliflags.AuthEnv + " (one\n" +
			"scheme:credential a line), which keeps them out of ps.",
		Flags:  flags,
		Action: runCommand,
	}
}

// runCommand is the shell command's action: flags to Options, then Run.
func runCommand(c *cli.Context) error {
	var tlsCfg *tls.Config
	if path := c.String("client-configuration"); path != "" {
		cfg, err := LoadClientConfiguration(path)
		if err != nil {
			return cli.Exit(err.Error(), exitFailed)
		}
		tlsCfg = cfg
	}
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return cli.Exit(err.Error(), exitFailed)
	}
	creds, err := cliflags.Credentials(c)
	if err != nil {
		return cli.Exit(err.Error(), exitFailed)
	}
	opts := Options{
		TLS:               tlsCfg,
		Server:            c.String(cliflags.ServerName),
		Timeout:           cliflags.TimeoutValue(c),
		ReadOnly:          c.Bool("r"),
		WaitForConnection: c.Bool("waitforconnection"),
		Quiet:             c.Bool("quiet"),
		StopOnError:       c.Bool("stop-on-error"),
		Auth:              creds,
	}
	if asJSON {
		opts.Output = "json"
	}
	in := c.App.Reader
	if f := c.String("file"); f != "" && f != "-" {
		file, err := os.Open(f)
		if err != nil {
			return cli.Exit(fmt.Sprintf("--file: %v", err), exitFailed)
		}
		defer file.Close()
		in = file
	}
	code := Run(opts, c.Args().Slice(), c.String("history-file"), in, c.App.Writer, c.App.ErrWriter)
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
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
	if s.jsonCommand(args) {
		s.opts.Output = "json"
	}
	s.banner("Connecting to %s\n", opts.Server)
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
	s.banner("Welcome to ZooKeeper!\n")
	if isTerminal(in) && isTerminal(out) {
		s.banner("JLine support is enabled\n")
		if err := s.interactive(historyFile); err != nil {
			s.eprintf("%v\n", err)
		}
		return s.ExitCode()
	}
	s.banner("JLine support is disabled\n")
	return s.script(in)
}

// script runs the commands of in, one a line, until quit or the end, or
// with StopOnError until one fails.
func (s *Shell) script(in io.Reader) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if errors.Is(s.ExecuteLine(sc.Text()), errQuit) {
			break
		}
		if s.opts.StopOnError && s.ExitCode() != exitOK {
			s.eprintf("stopped at line %d (exit status %d): %s\n", n, s.ExitCode(), sc.Text())
			return s.ExitCode()
		}
	}
	if err := sc.Err(); err != nil {
		s.eprintf("%s\n", fmt.Errorf("read commands: %w", err))
		return exitFailed
	}
	return s.ExitCode()
}
