package shell

import (
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// watchCommands are addWatch and removewatches; both go through the tap,
// as go-zookeeper v1.0.4 has neither operation.
func watchCommands() []*cmdSpec {
	return []*cmdSpec{
		{name: "addWatch", usage: "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE",
			run: runAddWatch, opts: []optSpec{{name: "m", hasArg: true}}},
		{name: "removewatches", usage: "path [-c|-d|-a] [-l]", run: runRemoveWatches, opts: []optSpec{
			{name: "c", desc: "child watcher type"}, {name: "d", desc: "data watcher type"},
			{name: "p", desc: "persistent watcher type"}, {name: "r", desc: "persistent recursive watcher type"},
			{name: "a", desc: "any watcher type"},
			{name: "l", desc: "remove locally when there is no server connection"}}},
	}
}

func runAddWatch(s *Shell, p *parsedArgs) error {
	if len(p.args) != 2 {
		return s.usageOf("addWatch")
	}
	mode := int32(1) // PERSISTENT_RECURSIVE
	if p.has("m") {
		switch strings.ToUpper(p.value("m")) {
		case "PERSISTENT":
			mode = 0
		case "PERSISTENT_RECURSIVE":
			mode = 1
		default:
			return s.usageOf("addWatch")
		}
	}
	path := p.args[1]
	if err := validatePath(path, false); err != nil {
		return err
	}
	req := &jute.PathTypeRequest{Path: s.serverPath(path), Type: mode}
	if err := s.sess.tap.call(jute.OpAddWatch, req, nil, s.opTimeout()); err != nil {
		return wrapKeeper(err, path)
	}
	if mode == 0 {
		s.sess.noteWatch(path, "persistent")
	} else {
		s.sess.noteWatch(path, "recursive")
	}
	return nil
}

func runRemoveWatches(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("removewatches")
	}
	path := p.args[1]
	wt := int32(watcherAny)
	switch {
	case p.has("c"):
		wt = watcherChildren
	case p.has("d"):
		wt = watcherData
	case p.has("p"):
		wt = watcherPersistent
	case p.has("r"):
		wt = watcherPersistentRecursive
	}
	local := p.has("l")
	if err := validatePath(path, false); err != nil {
		return err
	}
	ss := s.sess
	ss.mu.Lock()
	has := ss.watches.has(path, wt)
	ss.mu.Unlock()
	if !has {
		return wrapKeeper(jute.ErrCode(-121), path)
	}
	if !(local && ss.stateName() != "CONNECTED") {
		req := &jute.PathTypeRequest{Path: s.serverPath(path), Type: wt}
		if err := ss.tap.call(jute.OpRemoveWatches, req, nil, s.opTimeout()); err != nil && !local {
			return wrapKeeper(err, path)
		}
	}
	ss.mu.Lock()
	evs := ss.watches.remove(path, wt)
	ss.mu.Unlock()
	for _, ev := range evs {
		s.printEvent("SyncConnected", ev, path, -1)
	}
	return nil
}
