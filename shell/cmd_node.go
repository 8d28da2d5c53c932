package shell

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// maxTTL is EphemeralType.TTL.maxValue(): 40 bits of milliseconds.
const maxTTL = 1<<40 - 1

// nodeCommands are the znode commands: create, delete, deleteall, set and
// sync here, get, stat and ls in cmd_read.go.
func nodeCommands() []*cmdSpec {
	return []*cmdSpec{
		{name: "create", usage: "[-s] [-e] [-c] [-t ttl] path [data] [acl]", run: runCreate, opts: []optSpec{
			{name: "e", desc: "ephemeral"}, {name: "s", desc: "sequential"},
			{name: "c", desc: "container"}, {name: "t", hasArg: true, desc: "ttl"}}},
		{name: "delete", usage: "[-v version] path", run: runDelete, opts: []optSpec{
			{name: "v", hasArg: true, desc: "version"}}},
		{name: "deleteall", usage: "path [-b batch size]", run: runDeleteAll, opts: []optSpec{
			{name: "b", hasArg: true, desc: "batch size"}}},
		{name: "set", usage: "path data [-s] [-v version] [-b]", run: runSet, opts: []optSpec{
			{name: "s", desc: "Print znode stats additionally"},
			{name: "v", hasArg: true, desc: "Set with an expected version"},
			{name: "b", desc: "Supply data in base64 format"}}},
		{name: "get", usage: "[-s] [-w] [-b] [-x] path", run: runGet, json: true, opts: []optSpec{
			{name: "s", desc: "Print znode stats additionally"},
			{name: "w", desc: "Watch for changes on the znode"},
			{name: "b", desc: "Output data in base64 format"},
			{name: "x", desc: "Output data in hexdump format"}}},
		{name: "stat", usage: "[-w] path", run: runStat, json: true, opts: []optSpec{
			{name: "w", desc: "watch"}}},
		{name: "ls", usage: "[-s] [-w] [-R] path", run: runLs, json: true, opts: []optSpec{
			{name: "?", desc: "help"}, {name: "s", desc: "stat"},
			{name: "w", desc: "watch"}, {name: "R", desc: "recurse"}}},
		{name: "sync", usage: "path", run: runSync},
	}
}

// usageOf returns the usage error of the named command.
func (s *Shell) usageOf(name string) error { return usageError(s.commands[name].usageStr()) }

func runCreate(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("create")
	}
	hasE, hasS, hasC, hasT := p.has("e"), p.has("s"), p.has("c"), p.has("t")
	if hasC && (hasE || hasS) {
		return failf("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	}
	var ttl int64
	if hasT {
		v, err := strconv.ParseInt(p.value("t"), 10, 64)
		if err != nil {
			return failf("-t argument must be a long value")
		}
		ttl = v
	}
	if hasT && hasE {
		return failf("TTLs cannot be used with Ephemeral znodes")
	}
	if hasT && hasC {
		return failf("TTLs cannot be used with Container znodes")
	}
	var flags int32
	switch {
	case hasE && hasS:
		flags = zk.FlagEphemeralSequential
	case hasE:
		flags = zk.FlagEphemeral
	case hasS && hasT:
		flags = zk.FlagPersistentSequentialWithTTL
	case hasS:
		flags = zk.FlagSequence
	case hasC:
		flags = zk.FlagContainer
	case hasT:
		flags = zk.FlagTTL
	}
	if hasT && (ttl <= 0 || ttl > maxTTL) {
		return failf("ttl must be positive and cannot be larger than: %d", int64(maxTTL))
	}
	path := p.args[1]
	var data []byte
	if len(p.args) > 2 {
		data = []byte(p.args[2])
	}
	acl := zk.WorldACL(zk.PermAll)
	if len(p.args) > 3 {
		acl = parseACL(p.args[3], s.stderr())
	}
	if err := validatePath(path, hasS); err != nil {
		return err
	}
	if len(acl) == 0 {
		s.eprintf("%s\n", keeperMessage(-114, ""))
		return failf("Acl is not valid : null")
	}
	var created string
	var err error
	switch {
	case hasT:
		created, err = s.zk().CreateTTL(path, data, flags, acl, time.Duration(ttl)*time.Millisecond)
	case hasC:
		created, err = s.zk().CreateContainer(path, data, flags, acl)
	default:
		created, err = s.zk().Create(path, data, flags, acl)
	}
	if err != nil {
		if isCode(err, -114) {
			s.eprintf("%s\n", keeperMessage(-114, path))
		}
		return wrapKeeper(err, path)
	}
	s.eprintf("Created %s\n", created)
	if s.jsonSession() {
		return s.printJSON(struct {
			Path string `json:"path"`
		}{created})
	}
	return nil
}

// parseVersion is Integer.parseInt on a -v value.
func parseVersion(p *parsedArgs) (int32, error) {
	if !p.has("v") {
		return -1, nil
	}
	v, err := strconv.ParseInt(p.value("v"), 10, 32)
	if err != nil {
		return 0, failf("java.lang.NumberFormatException: For input string: \"%s\"", p.value("v"))
	}
	return int32(v), nil
}

func runDelete(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("delete")
	}
	if len(p.args) > 2 {
		s.eprintf("'delete path [version]' has been deprecated. Please use 'delete [-v version] path' instead.\n")
	}
	path := p.args[1]
	version, err := parseVersion(p)
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	if err := s.zk().Delete(path, version); err != nil {
		return wrapKeeper(err, path)
	}
	return nil
}

// listSubTreeBFS is ZKUtil.listSubTreeBFS: the root, then every descendant
// breadth first, children in server order.
func (s *Shell) listSubTreeBFS(root string) ([]string, error) {
	tree := []string{root}
	for i := 0; i < len(tree); i++ {
		children, _, err := s.zk().Children(tree[i])
		if err != nil {
			return nil, wrapKeeper(err, tree[i])
		}
		for _, c := range children {
			tree = append(tree, joinPath(tree[i], c))
		}
	}
	return tree, nil
}

func runDeleteAll(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("deleteall")
	}
	batch := 1000
	if p.has("b") {
		v, err := strconv.Atoi(p.value("b"))
		if err != nil {
			return failf("-b argument must be an int value")
		}
		batch = v
	}
	path := p.args[1]
	if err := validatePath(path, false); err != nil {
		return err
	}
	tree, err := s.listSubTreeBFS(path)
	if err != nil {
		return err
	}
	// Leaves first, root last, in multi batches (ZKUtil.deleteInBatch).
	ok := true
	var ops []string
	for i := len(tree) - 1; i >= 0; i-- {
		ops = append(ops, tree[i])
		if len(ops) == batch || i == 0 {
			if err := s.zk().deleteMulti(ops); err != nil {
				ok = false
				break
			}
			ops = nil
		}
	}
	if !ok {
		s.eprintf("Failed to delete some node(s) in the subtree!\n")
	}
	return nil
}

func runSet(s *Shell, p *parsedArgs) error {
	if len(p.args) < 3 {
		return s.usageOf("set")
	}
	path := p.args[1]
	data := []byte(p.args[2])
	if p.has("b") {
		d, err := base64.StdEncoding.DecodeString(p.args[2])
		if err != nil {
			return failf("java.lang.IllegalArgumentException: %v", err)
		}
		data = d
	}
	version, err := parseVersion(p)
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	st, err := s.zk().Set(path, data, version)
	if err != nil {
		return wrapKeeper(err, path)
	}
	if p.has("s") && s.jsonSession() {
		return s.printJSON(struct {
			Path string       `json:"path"`
			Stat *zkjson.Stat `json:"stat"`
		}{path, zkjson.StatOf(st)})
	}
	if p.has("s") {
		s.printf("%s", statText(st))
	}
	return nil
}

func runSync(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("sync")
	}
	path := p.args[1]
	if err := validatePath(path, false); err != nil {
		return err
	}
	if _, err := s.zk().Sync(path); err != nil {
		code, _ := keeperCode(err)
		if code == 0 {
			return fmt.Errorf("sync %s: %w", path, err)
		}
		s.printf("Sync has failed. rc=%d\n", int32(code))
		return nil
	}
	s.printf("Sync is OK\n")
	if s.jsonSession() {
		return s.printJSON(struct {
			Path string `json:"path"`
			OK   bool   `json:"synced"`
		}{path, true})
	}
	return nil
}
