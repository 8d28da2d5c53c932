package ensemble

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"reflect"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapHCLog is hashicorp/raft's logger (hclog.Logger) written straight to
// zap: each call becomes one zap entry at the matching level, its
// key/value pairs zap fields, With's pairs fields of every entry and
// Named's names the zap logger's name. Nothing is formatted and parsed
// back. Raft's errors are routine (a member unreachable, a vote refused),
// so no stack trace is attached to them whatever the zap config says.
type zapHCLog struct {
	root  *zap.Logger   // the server's logger, without this one's name and fields
	zl    *zap.Logger   // root named and with the implied fields
	name  string        // hclog's dotted name ("raft", "raft.snapshot")
	args  []interface{} // With's pairs, as given
	level *atomic.Int32 // the least hclog.Level passed on, shared by derived loggers
}

var _ hclog.Logger = (*zapHCLog)(nil)

// noStacktrace keeps zap from adding a stack trace to any entry.
var noStacktrace = zap.AddStacktrace(zap.LevelEnablerFunc(func(zapcore.Level) bool { return false }))

// newZapHCLog returns an hclog.Logger named name that writes to log,
// passing on the entries at level and above.
func newZapHCLog(log *zap.Logger, name string, level hclog.Level) *zapHCLog {
	l := &zapHCLog{root: log.WithOptions(noStacktrace), name: name, level: new(atomic.Int32)}
	l.level.Store(int32(level))
	l.zl = l.build()
	return l
}

// newHCLogger adapts zap for hashicorp/raft. Raft's info lines are chatty,
// so they are passed on only when the server logs at debug level; a lone
// member's warnings (its routine self-election) only at debug level too.
// The lines an operator follows (leader elected, membership changed,
// snapshot taken, ...) are the member's own (events.go).
func newHCLogger(log *zap.Logger, multi bool) hclog.Logger {
	level := hclog.Warn
	if !multi {
		level = hclog.Error
	}
	if log.Core().Enabled(zap.DebugLevel) {
		level = hclog.Debug
	}
	return newZapHCLog(log, "raft", level)
}

func (l *zapHCLog) build() *zap.Logger {
	zl := l.root
	if l.name != "" {
		zl = zl.Named(l.name)
	}
	if len(l.args) > 0 {
		zl = zl.With(zapFields(l.args)...)
	}
	return zl
}

// zapLevel maps an hclog level to zap's (zap has no trace).
func zapLevel(level hclog.Level) zapcore.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return zapcore.DebugLevel
	case hclog.Info, hclog.NoLevel:
		return zapcore.InfoLevel
	case hclog.Warn:
		return zapcore.WarnLevel
	default:
		return zapcore.ErrorLevel
	}
}

// enabled reports whether an entry at level is written.
func (l *zapHCLog) enabled(level hclog.Level) bool {
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	min := hclog.Level(l.level.Load())
	if min == hclog.Off || level < min {
		return false
	}
	return l.zl.Core().Enabled(zapLevel(level))
}

// peerDown are the lines hashicorp/raft logs at ERROR when a member does
// not answer (down, restarting, cut off) or has moved to a newer term:
// routine in an ensemble, so logged at WARN, as ZooKeeper logs its
// "Cannot open channel to" and "Connection broken for id" lines.
var peerDown = map[string]bool{
	"failed to appendEntries to":                true,
	"failed to heartbeat to":                    true,
	"failed to pipeline appendEntries":          true,
	"failed to start pipeline replication to":   true,
	"failed to make requestVote RPC":            true,
	"failed to send snapshot to":                true,
	"peer has newer term, stopping replication": true,
}

// Log implements hclog.Logger.
func (l *zapHCLog) Log(level hclog.Level, msg string, args ...interface{}) {
	if level == hclog.Error && peerDown[msg] {
		level = hclog.Warn
	}
	if !l.enabled(level) {
		return
	}
	if ce := l.zl.Check(zapLevel(level), msg); ce != nil {
		ce.Write(zapFields(args)...)
	}
}

// Trace implements hclog.Logger.
func (l *zapHCLog) Trace(msg string, args ...interface{}) { l.Log(hclog.Trace, msg, args...) }

// Debug implements hclog.Logger.
func (l *zapHCLog) Debug(msg string, args ...interface{}) { l.Log(hclog.Debug, msg, args...) }

// Info implements hclog.Logger.
func (l *zapHCLog) Info(msg string, args ...interface{}) { l.Log(hclog.Info, msg, args...) }

// Warn implements hclog.Logger.
func (l *zapHCLog) Warn(msg string, args ...interface{}) { l.Log(hclog.Warn, msg, args...) }

// Error implements hclog.Logger.
func (l *zapHCLog) Error(msg string, args ...interface{}) { l.Log(hclog.Error, msg, args...) }

// IsTrace implements hclog.Logger.
func (l *zapHCLog) IsTrace() bool { return l.enabled(hclog.Trace) }

// IsDebug implements hclog.Logger.
func (l *zapHCLog) IsDebug() bool { return l.enabled(hclog.Debug) }

// IsInfo implements hclog.Logger.
func (l *zapHCLog) IsInfo() bool { return l.enabled(hclog.Info) }

// IsWarn implements hclog.Logger.
func (l *zapHCLog) IsWarn() bool { return l.enabled(hclog.Warn) }

// IsError implements hclog.Logger.
func (l *zapHCLog) IsError() bool { return l.enabled(hclog.Error) }

// ImpliedArgs implements hclog.Logger.
func (l *zapHCLog) ImpliedArgs() []interface{} { return l.args }

// With implements hclog.Logger: args become fields of every entry.
func (l *zapHCLog) With(args ...interface{}) hclog.Logger {
	c := *l
	c.args = append(append([]interface{}(nil), l.args...), args...)
	c.zl = c.build()
	return &c
}

// Name implements hclog.Logger.
func (l *zapHCLog) Name() string { return l.name }

// Named implements hclog.Logger: the name is appended to this one's.
func (l *zapHCLog) Named(name string) hclog.Logger {
	if l.name != "" {
		name = l.name + "." + name
	}
	return l.ResetNamed(name)
}

// ResetNamed implements hclog.Logger.
func (l *zapHCLog) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	c.zl = c.build()
	return &c
}

// SetLevel implements hclog.Logger; it applies to every logger derived
// from the same one. zap's own level still applies.
func (l *zapHCLog) SetLevel(level hclog.Level) { l.level.Store(int32(level)) }

// GetLevel implements hclog.Logger.
func (l *zapHCLog) GetLevel() hclog.Level { return hclog.Level(l.level.Load()) }

// StandardLogger implements hclog.Logger.
func (l *zapHCLog) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}

// StandardWriter implements hclog.Logger: each line written is one entry,
// at opts.ForceLevel if set, else at the level its "[LEVEL]" prefix names
// when opts.InferLevels, else at info. (Raft itself does not use it.)
func (l *zapHCLog) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	if opts == nil {
		opts = &hclog.StandardLoggerOptions{}
	}
	return stdWriter{l: l, opts: *opts}
}

// stdWriter is the io.Writer of StandardWriter.
type stdWriter struct {
	l    *zapHCLog
	opts hclog.StandardLoggerOptions
}

func (w stdWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(string(bytes.TrimRight(p, "\n")), "\n") {
		level, msg := hclog.Info, strings.TrimSpace(line)
		if w.opts.InferLevels {
			for _, c := range []struct {
				tag   string
				level hclog.Level
			}{{"[TRACE]", hclog.Trace}, {"[DEBUG]", hclog.Debug}, {"[INFO]", hclog.Info}, {"[WARN]", hclog.Warn}, {"[ERROR]", hclog.Error}, {"[ERR]", hclog.Error}} {
				if rest, ok := strings.CutPrefix(msg, c.tag); ok {
					level, msg = c.level, strings.TrimSpace(rest)
					break
				}
			}
		}
		if w.opts.ForceLevel != hclog.NoLevel {
			level = w.opts.ForceLevel
		}
		w.l.Log(level, msg)
	}
	return len(p), nil
}

// zapFields turns hclog's alternating key/value pairs into zap fields. A
// value without a key goes under hclog's own EXTRA_VALUE_AT_END.
func zapFields(args []interface{}) []zap.Field {
	if len(args) == 0 {
		return nil
	}
	fields := make([]zap.Field, 0, (len(args)+1)/2)
	for i := 0; i < len(args); i += 2 {
		if i+1 == len(args) {
			fields = append(fields, zapField(hclog.MissingKey, args[i]))
			break
		}
		key, ok := args[i].(string)
		if !ok {
			key = fmt.Sprint(args[i])
		}
		fields = append(fields, zapField(key, args[i+1]))
	}
	return fields
}

// zapField is one field: hclog's formatting wrappers are applied, errors
// and Stringers are text (raft passes its *Raft, ServerID and
// ServerAddress), other values zap's own encoding.
func zapField(key string, v interface{}) zap.Field {
	switch x := v.(type) {
	case nil:
		return zap.Skip()
	case string:
		return zap.String(key, x)
	case error:
		// fmt calls Error as x.Error() would, but a typed nil (a nil
		// *SomeError in an error) prints as <nil> instead of panicking.
		return zap.String(key, fmt.Sprint(x))
	case hclog.Format:
		if len(x) == 0 {
			return zap.String(key, "")
		}
		format, _ := x[0].(string)
		return zap.String(key, fmt.Sprintf(format, x[1:]...))
	case hclog.Hex:
		return zap.String(key, fmt.Sprintf("0x%x", int(x)))
	case hclog.Octal:
		return zap.String(key, fmt.Sprintf("0%o", int(x)))
	case hclog.Binary:
		return zap.String(key, fmt.Sprintf("0b%b", int(x)))
	case hclog.Quote:
		return zap.String(key, fmt.Sprintf("%q", string(x)))
	case fmt.Stringer:
		return zap.Stringer(key, x)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return zap.String(key, rv.String())
	}
	return zap.Any(key, v)
}
