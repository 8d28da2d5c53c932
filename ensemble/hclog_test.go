package ensemble

import (
	"errors"
	"testing"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestHCLogEntriesAreStructured: what raft logs through hclog arrives as
// zap entries with its key/value pairs as fields (With's too, and Named's
// name as the logger name), at the matching level (a peer's failure at
// warn), with no formatted blob to parse and no stack trace on an error,
// even from a zap logger that adds one to its own errors (the json
// production config does).
func TestHCLogEntriesAreStructured(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	zl := zap.New(core, zap.AddStacktrace(zapcore.ErrorLevel))
	hl := newHCLogger(zl, true)

	hl.Named("snapshot").With("path", "/d/snapshots/2-10-1").Info("creating new snapshot", "index", uint64(10))
	hl.Error("failed to appendEntries to", "peer", raftAddr("127.0.0.1:2888"), "error", errors.New("connection refused"),
		"detail", hclog.Fmt("%d/%d", 3, 4))
	hl.Warn("odd", "lonely")

	entries := logs.AllUntimed()
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(entries), entries)
	}
	info := entries[0]
	if info.Level != zapcore.InfoLevel || info.LoggerName != "raft.snapshot" || info.Message != "creating new snapshot" {
		t.Fatalf("info entry: %v %q %q", info.Level, info.LoggerName, info.Message)
	}
	if f := info.ContextMap(); f["path"] != "/d/snapshots/2-10-1" || f["index"] != uint64(10) {
		t.Fatalf("info fields %v", f)
	}
	e := entries[1]
	if e.Level != zapcore.WarnLevel || e.LoggerName != "raft" || e.Message != "failed to appendEntries to" {
		t.Fatalf("error entry: %v %q %q", e.Level, e.LoggerName, e.Message)
	}
	if e.Stack != "" {
		t.Fatalf("a routine raft error carries a stack trace:\n%s", e.Stack)
	}
	if f := e.ContextMap(); f["peer"] != "127.0.0.1:2888" || f["error"] != "connection refused" || f["detail"] != "3/4" {
		t.Fatalf("error fields %v", f)
	}
	if f := entries[2].ContextMap(); f[hclog.MissingKey] != "lonely" {
		t.Fatalf("a value without a key: %v", f)
	}
}

// raftAddr stands for raft.ServerAddress: a named string type.
type raftAddr string

// TestHCLogLevels: raft's info and debug lines pass only when the server
// logs at debug level; its warnings pass in an ensemble, a lone member's
// only at debug level; hclog's Is* guards and SetLevel agree.
func TestHCLogLevels(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	hl := newHCLogger(zap.New(core), true)
	hl.Info("entering follower state")
	hl.Debug("chatty")
	hl.Warn("heartbeat timeout reached")
	if hl.IsInfo() || !hl.IsWarn() || hl.GetLevel() != hclog.Warn {
		t.Fatalf("IsInfo %v IsWarn %v level %v", hl.IsInfo(), hl.IsWarn(), hl.GetLevel())
	}
	if got := logs.AllUntimed(); len(got) != 1 || got[0].Level != zapcore.WarnLevel {
		t.Fatalf("at info: %+v, want the warning alone", got)
	}
	lone := newHCLogger(zap.New(core), false)
	lone.Warn("lone warning")
	if logs.Len() != 1 {
		t.Fatal("a lone member's raft warning passed at info level")
	}
	named := hl.Named("x")
	hl.SetLevel(hclog.Off)
	if named.IsError() {
		t.Fatal("SetLevel did not reach a derived logger")
	}

	dcore, dlogs := observer.New(zapcore.DebugLevel)
	dl := newHCLogger(zap.New(dcore), false)
	dl.Trace("trace, not passed at debug")
	dl.SetLevel(hclog.Trace)
	dl.Trace("trace")
	dl.Debug("debug")
	dl.Info("info")
	if dlogs.Len() != 3 || !dl.IsDebug() {
		t.Fatalf("at debug level: %d entries", dlogs.Len())
	}
	if dlogs.AllUntimed()[0].Level != zapcore.DebugLevel {
		t.Fatal("trace is not zap's debug")
	}
}

// nilDerefError is an error whose Error dereferences its receiver.
type nilDerefError struct{ msg string }

func (e *nilDerefError) Error() string { return e.msg }

// TestHCLogTypedNilError: a typed nil error among raft's fields is
// logged as <nil>; it used to panic the member in the logger.
func TestHCLogTypedNilError(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	hl := newHCLogger(zap.New(core), true)
	var e *nilDerefError
	hl.Error("failed to appendEntries", "error", error(e))
	got := logs.AllUntimed()
	if len(got) != 1 || got[0].ContextMap()["error"] != "<nil>" {
		t.Fatalf("entries %+v, want one with error <nil>", got)
	}
}

// TestHCLogPeerDownIsWarn: raft's errors about a member that does not
// answer (as when one is down) are warnings, as ZooKeeper's; its other
// errors stay errors.
func TestHCLogPeerDownIsWarn(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	hl := newHCLogger(zap.New(core), true)
	down := errors.New("dial tcp 127.0.0.1:2889: connect: connection refused")
	hl.Error("failed to appendEntries to", "peer", "2", "error", down)
	hl.Error("failed to heartbeat to", "peer", "127.0.0.1:2889", "backoff time", "10ms", "error", down)
	hl.Error("failed to pipeline appendEntries", "peer", "2", "error", down)
	hl.Error("failed to start pipeline replication to", "peer", "2", "error", down)
	hl.Error("failed to make requestVote RPC", "target", "2", "error", down, "term", uint64(3))
	hl.Error("failed to send snapshot to", "peer", "2", "error", down)
	hl.Error("peer has newer term, stopping replication", "peer", "2")
	hl.Error("failed to append to logs", "error", errors.New("no space left on device"))
	entries := logs.AllUntimed()
	if len(entries) != 8 {
		t.Fatalf("%d entries, want 8", len(entries))
	}
	for _, e := range entries[:7] {
		if e.Level != zapcore.WarnLevel {
			t.Errorf("%q at %v, want warn", e.Message, e.Level)
		}
	}
	if e := entries[7]; e.Level != zapcore.ErrorLevel {
		t.Errorf("%q at %v, want error", e.Message, e.Level)
	}
}
