package shell

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
)

// Options configure a Shell; they mirror zkCli's command-line switches.
type Options struct {
	Server  string        // connect string: host:port[,host:port...]
	Timeout time.Duration // session timeout (zkCli's -timeout, default 30s)
	// ReadOnly asks for a read-only capable session (zkCli's -r). go-zookeeper
	// cannot request one, so it is accepted and ignored.
	ReadOnly bool
	// WaitForConnection makes the shell wait up to Timeout for the first
	// session before running commands (zkCli's -waitforconnection).
	WaitForConnection bool
	// Output is the default output format of read commands: "" (zkCli's
	// text) or "json".
	Output string
	// Terminal marks stdout as a terminal: binary data is then escaped.
	Terminal bool
	// TLS, when set, connects over TLS (zkCli's -client-configuration with
	// zookeeper.client.secure=true; see LoadClientConfiguration).
	TLS *tls.Config
	// Quiet leaves out the banner and the connection-state events
	// (SyncConnected, Disconnected, Closed...); watch notifications stay.
	Quiet bool
	// StopOnError ends a run at the first failing command, which also
	// counts "Not connected" as a failure; the exit status is that
	// command's.
	StopOnError bool
	// Auth are added to every session the shell opens, before any command
	// runs, as addauth would.
	Auth []cliflags.Credential
}

// Shell is one zkCli-compatible session: the connection, the command
// history and the printing state. Output written by commands and by watch
// notifications is serialised by outMu.
type Shell struct {
	opts Options

	outMu sync.Mutex // guards writes to out and errw
	out   io.Writer
	errw  io.Writer

	sess *session // current connection; nil before the first connect

	history      map[int]string
	commandCount int
	exitCode     int

	printMu      sync.Mutex // guards printWatches
	printWatches bool

	// inInteractive is set while the line-editing loop runs: connection
	// changes are then also announced in plain words on stderr.
	inInteractive atomic.Bool
	// atPrompt is set while the line editor waits for input: output that
	// arrives then (watch events, connection notes) is followed by a fresh
	// prompt so the user sees where to type and the new connection state.
	atPrompt atomic.Bool
	// idlePrompt is what to print then: host and command number captured
	// when the editor started waiting (the state is read afresh).
	idleSess  atomic.Pointer[session]
	idleCount atomic.Int64

	commands map[string]*cmdSpec
}

// errQuit stops the command loop after quit.
var errQuit = errors.New("quit")

// New returns a Shell writing to out and errw. It does not connect.
func New(opts Options, out, errw io.Writer) *Shell {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	s := &Shell{
		opts:         opts,
		out:          out,
		errw:         errw,
		history:      map[int]string{},
		printWatches: true,
	}
	s.commands = commandTable()
	return s
}

// printf writes text output under the output lock: to stdout, or to
// stderr in a JSON session, whose stdout carries JSON alone.
func (s *Shell) printf(format string, args ...any) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.textOut(), format, args...)
}

// eprintf writes to stderr under the output lock.
func (s *Shell) eprintf(format string, args ...any) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.errw, format, args...)
}

// stderr is a writer to stderr that takes the output lock per write.
func (s *Shell) stderr() io.Writer { return lockedWriter{s, true} }

// lockedWriter writes to the shell's stdout, or stderr when err is set,
// taking the output lock for each write.
type lockedWriter struct {
	s   *Shell
	err bool
}

// Write writes p to the shell's stdout or stderr under the output lock.
func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.outMu.Lock()
	defer w.s.outMu.Unlock()
	if w.err {
		return w.s.errw.Write(p)
	}
	return w.s.out.Write(p)
}

// watchesOn reports whether watch notifications are printed.
func (s *Shell) watchesOn() bool {
	s.printMu.Lock()
	defer s.printMu.Unlock()
	return s.printWatches
}

// Prompt is zkCli's prompt: "[zk: host:port(CONNECTED) 3] ".
func (s *Shell) Prompt() string {
	return fmt.Sprintf("[zk: %s(%s) %d] ", s.host(), s.stateName(), s.commandCount)
}

func (s *Shell) host() string {
	if s.sess == nil {
		return s.opts.Server
	}
	return s.sess.host
}

func (s *Shell) stateName() string {
	if s.sess == nil {
		return "CLOSED"
	}
	return s.sess.stateName()
}

// ExitCode is the status of the last command, as zkCli exits with it.
func (s *Shell) ExitCode() int { return s.exitCode }

// ExecuteLine runs one line typed or piped in, as ZooKeeperMain.executeLine.
// It returns errQuit-wrapping error when the line was quit.
func (s *Shell) ExecuteLine(line string) error {
	if line == "" {
		return nil
	}
	args := splitLine(line)
	s.history[s.commandCount] = line
	err := s.processCmd(args)
	s.commandCount++
	return err
}

// RunCommand runs a command given on the command line.
func (s *Shell) RunCommand(args []string) error {
	return s.processCmd(args)
}

// processCmd runs one command and records its exit status; failures are
// printed on stderr.
func (s *Shell) processCmd(args []string) error {
	err := s.processZKCmd(args)
	if errors.Is(err, errQuit) {
		return err
	}
	if err != nil {
		var ce *cliError
		if !errors.As(err, &ce) {
			ce = &cliError{msg: err.Error(), code: exitFailed}
		}
		s.exitCode = ce.code
		s.eprintf("%s\n", ce.msg)
		return nil
	}
	s.exitCode = exitOK
	return nil
}

// usage is ZooKeeperMain.usage: every command and its option string.
func (s *Shell) usage() {
	var b strings.Builder
	b.WriteString("ZooKeeper -server host:port -client-configuration properties-file cmd args\n")
	names := make([]string, 0, len(s.commands))
	for n := range s.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\t%s %s\n", n, s.commands[n].usage)
	}
	s.eprintf("%s", b.String())
}

// processZKCmd is ZooKeeperMain.processZKCmd.
func (s *Shell) processZKCmd(args []string) error {
	if len(args) < 1 {
		s.usage()
		return failf("No command entered")
	}
	name := args[0]
	spec, ok := s.commands[name]
	if !ok {
		s.usage()
		return &cliError{msg: "Command not found: Command not found " + name, code: exitNotFound}
	}
	switch name {
	case "quit":
		s.closeSession(true)
		return errQuit
	case "redo":
		if len(args) >= 2 {
			if err := s.redo(args[1]); err != nil {
				return err
			}
		}
	case "history":
		for i := s.commandCount - 10; i <= s.commandCount; i++ {
			if i < 0 {
				continue
			}
			s.printf("%d - %s\n", i, s.history[i])
		}
	case "printwatches":
		if len(args) == 1 {
			on := "off"
			if s.watchesOn() {
				on = "on"
			}
			s.printf("printwatches is %s\n", on)
		} else {
			s.printMu.Lock()
			s.printWatches = args[1] == "on"
			s.printMu.Unlock()
		}
	case "connect":
		host := s.host()
		if len(args) >= 2 {
			host = args[1]
		}
		if err := s.connect(host); err != nil {
			return err
		}
	}
	if s.sess == nil || !s.sess.alive() {
		if s.opts.StopOnError {
			return failf("Not connected")
		}
		s.printf("Not connected\n")
		return nil
	}
	if spec.run == nil {
		return nil
	}
	p, err := parseArgs(args, spec.opts, spec.json)
	if err != nil {
		return &cliError{msg: err.Error(), code: exitFailed, err: err}
	}
	return spec.run(s, p)
}

// redo re-runs history entry arg (decimal, 0x hex or 0 octal, as
// Integer.decode).
func (s *Shell) redo(arg string) error {
	i64, err := strconv.ParseInt(arg, 0, 32)
	i := int(i64)
	if err != nil || s.commandCount <= i || i < 0 {
		return failf("Command index out of range")
	}
	line := s.history[i]
	args := splitLine(line)
	if len(args) > 0 && args[0] == "redo" {
		return failf("No redoing redos")
	}
	s.history[s.commandCount] = line
	return s.processCmd(args)
}
