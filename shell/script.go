package shell

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-zookeeper/zk"
)

// What the shell adds for scripts, beyond zkCli: a JSON session whose
// stdout carries only JSON, a quiet mode, credentials given up front and
// stopping at the first failing command.

// jsonSession reports whether the session prints JSON (-o json): read
// commands print JSON documents on stdout, and everything else that zkCli
// prints on stdout (the banner, WATCHER:: events, "Not connected", the
// text of commands without a JSON form) goes to stderr.
func (s *Shell) jsonSession() bool { return s.opts.Output == "json" }

// textOut is where text output goes: stdout, or stderr in a JSON session.
// The caller holds outMu.
func (s *Shell) textOut() io.Writer {
	if s.jsonSession() {
		return s.errw
	}
	return s.out
}

// banner prints one line of zkCli's start-up banner, unless quiet.
func (s *Shell) banner(format string, args ...any) {
	if !s.opts.Quiet {
		s.printf(format, args...)
	}
}

// quietEvent reports whether a WATCHER:: event is left out: in a quiet
// shell, the connection-state events (type None, no path).
func (s *Shell) quietEvent(typ, path string) bool {
	return s.opts.Quiet && typ == "None" && path == ""
}

// addCredentials sends the --auth credentials on a new connection. A
// credential the server rejects ends the session (AuthFailed), which
// fails the connect.
func (s *Shell) addCredentials(conn *zk.Conn) error {
	for _, c := range s.opts.Auth {
		if err := conn.AddAuth(c.Scheme, []byte(c.Cred)); err != nil {
			msg := fmt.Sprintf("--auth %s: %v", c.Scheme, err)
			if errors.Is(err, zk.ErrAuthFailed) || isCode(err, -115) {
				msg = fmt.Sprintf("--auth %s: the server rejected the credential", c.Scheme)
			}
			return &cliError{msg: msg, code: exitFailed, err: fmt.Errorf("add auth %s: %w", c.Scheme, err)}
		}
	}
	return nil
}

// jsonCommand reports whether args, the one command given on zkraft
// shell's command line, asks for JSON (get /a -o json): the run is then a
// JSON session, its banner and events on stderr, as with -o json before
// the command.
func (s *Shell) jsonCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	spec, ok := s.commands[args[0]]
	if !ok || !spec.json {
		return false
	}
	p, err := parseArgs(args, spec.opts, true)
	return err == nil && p.value(outputFlag) == "json"
}
