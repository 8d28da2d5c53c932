package ensemble

import (
	"bytes"
	"strings"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"
)

// zapWriter turns hclog's formatted lines into zap entries, so Raft's logs
// join the server's structured log at the matching level.
type zapWriter struct{ log *zap.Logger }

func (z zapWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(bytes.TrimRight(p, "\n")))
	switch {
	case strings.Contains(line, "[ERROR]"):
		z.log.Error(line)
	case strings.Contains(line, "[WARN]"):
		z.log.Warn(line)
	case strings.Contains(line, "[INFO]"):
		z.log.Info(line)
	default:
		z.log.Debug(line)
	}
	return len(p), nil
}

// newHCLogger adapts zap for hashicorp/raft. Raft's info lines are chatty,
// so they are passed on only when the server logs at debug level; a lone
// member's warnings (its routine self-election) only at debug level too.
func newHCLogger(log *zap.Logger, multi bool) hclog.Logger {
	level := hclog.Warn
	if !multi {
		level = hclog.Error
	}
	if log.Core().Enabled(zap.DebugLevel) {
		level = hclog.Debug
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:            "raft",
		Level:           level,
		Output:          zapWriter{log: log.Named("raft")},
		DisableTime:     true,
		IncludeLocation: false,
	})
}
