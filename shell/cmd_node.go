package shell

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
)

// maxTTL is EphemeralType.TTL.maxValue(): 40 bits of milliseconds.
const maxTTL = 1<<40 - 1

// nodeCommands are the znode data commands: create, delete, deleteall, set,
// get, stat, ls, sync.
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
	var ops []any
	for i := len(tree) - 1; i >= 0; i-- {
		ops = append(ops, &zk.DeleteRequest{Path: tree[i], Version: -1})
		if len(ops) == batch || i == 0 {
			if _, err := s.zk().Multi(ops...); err != nil {
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
	if p.has("s") {
		s.printf("%s", statText(st))
	}
	return nil
}

// getJSON is the --output json form of get.
type getJSON struct {
	Path       string    `json:"path"`
	Data       *string   `json:"data"`
	DataBase64 *string   `json:"dataBase64,omitempty"`
	Stat       *statJSON `json:"stat,omitempty"`
}

// dataJSON fills the data fields: text when it is valid UTF-8, otherwise
// base64; both nil for a null value.
func dataJSON(data []byte) (text, b64 *string) {
	if data == nil {
		return nil, nil
	}
	if utf8.Valid(data) {
		t := string(data)
		return &t, nil
	}
	b := base64.StdEncoding.EncodeToString(data)
	return nil, &b
}

// watchCompat handles zkCli's deprecated "cmd path watch" form: a third
// argument means -w.
func watchCompat(s *Shell, p *parsedArgs, cmd, modern string) bool {
	if len(p.args) > 2 {
		s.eprintf("'%s path [watch]' has been deprecated. Please use '%s' instead.\n", cmd, modern)
		return true
	}
	return p.has("w")
}

func runGet(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("get")
	}
	watch := watchCompat(s, p, "get", "get [-s] [-w] path")
	asJSON, err := s.jsonOutput(p)
	if err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path, false); err != nil {
		return err
	}
	var data []byte
	var st *zk.Stat
	if watch {
		data, st, _, err = s.zk().GetW(path)
	} else {
		data, st, err = s.zk().Get(path)
	}
	if err != nil {
		return wrapKeeper(err, path)
	}
	if watch {
		s.sess.noteWatch(path, "data")
	}
	if asJSON {
		out := getJSON{Path: path}
		out.Data, out.DataBase64 = dataJSON(data)
		if p.has("s") {
			out.Stat = toStatJSON(st)
		}
		return s.printJSON(out)
	}
	if data == nil {
		data = []byte("null")
	}
	var text string
	switch {
	case p.has("x"):
		text = hexDump(data)
	case p.has("b"):
		text = base64.StdEncoding.EncodeToString(data)
	default:
		text = plainData(data, s.opts.Terminal)
	}
	s.printf("%s\n", text)
	if p.has("s") {
		s.printf("%s", statText(st))
	}
	return nil
}

func runStat(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("stat")
	}
	watch := watchCompat(s, p, "stat", "stat [-w] path")
	asJSON, err := s.jsonOutput(p)
	if err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path, false); err != nil {
		return err
	}
	var ok bool
	var st *zk.Stat
	if watch {
		ok, st, _, err = s.zk().ExistsW(path)
	} else {
		ok, st, err = s.zk().Exists(path)
	}
	if err != nil {
		return wrapKeeper(err, path)
	}
	if watch {
		s.sess.noteWatch(path, "exist")
	}
	if !ok {
		return wrapKeeper(zk.ErrNoNode, path)
	}
	if asJSON {
		return s.printJSON(struct {
			Path string    `json:"path"`
			Stat *statJSON `json:"stat"`
		}{path, toStatJSON(st)})
	}
	s.printf("%s", statText(st))
	return nil
}

func runLs(s *Shell, p *parsedArgs) error {
	if p.has("?") {
		s.printf("usage: ls [options] path\n -?   help\n -R   recurse\n -s   stat\n -w   watch\n")
	}
	watch := watchCompat(s, p, "ls", "ls [-w] path")
	if len(p.args) < 2 {
		return s.usageOf("ls")
	}
	asJSON, err := s.jsonOutput(p)
	if err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path, false); err != nil {
		return err
	}
	if p.has("R") {
		return s.lsRecursive(path, watch, asJSON)
	}
	var children []string
	var st *zk.Stat
	if watch {
		children, st, _, err = s.zk().ChildrenW(path)
	} else {
		children, st, err = s.zk().Children(path)
	}
	if err != nil {
		return wrapKeeper(err, path)
	}
	if watch {
		s.sess.noteWatch(path, "child")
	}
	sort.Strings(children)
	if asJSON {
		out := struct {
			Path     string    `json:"path"`
			Children []string  `json:"children"`
			Stat     *statJSON `json:"stat,omitempty"`
		}{Path: path, Children: append([]string{}, children...)}
		if p.has("s") {
			out.Stat = toStatJSON(st)
		}
		return s.printJSON(out)
	}
	s.printf("[%s]\n", strings.Join(children, ", "))
	if p.has("s") {
		s.printf("%s", statText(st))
	}
	return nil
}

// lsRecursive is ZKUtil.visitSubTreeDFS as ls -R uses it: the root, then for
// each node its sorted children's paths before descending into them.
func (s *Shell) lsRecursive(root string, watch, asJSON bool) error {
	var err error
	if watch {
		_, _, _, err = s.zk().GetW(root)
	} else {
		_, _, err = s.zk().Get(root)
	}
	if err != nil {
		return wrapKeeper(err, root)
	}
	var paths []string
	emit := func(p string) {
		if asJSON {
			paths = append(paths, p)
		} else {
			s.printf("%s\n", p)
		}
	}
	emit(root)
	var visit func(path string) error
	visit = func(path string) error {
		var children []string
		var err error
		if watch {
			children, _, _, err = s.zk().ChildrenW(path)
		} else {
			children, _, err = s.zk().Children(path)
		}
		if isCode(err, -101) {
			return nil
		}
		if err != nil {
			return wrapKeeper(err, path)
		}
		if watch {
			s.sess.noteWatch(path, "child")
		}
		sort.Strings(children)
		for _, c := range children {
			emit(joinPath(path, c))
		}
		for _, c := range children {
			if err := visit(joinPath(path, c)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(root); err != nil {
		return err
	}
	if asJSON {
		return s.printJSON(struct {
			Path  string   `json:"path"`
			Paths []string `json:"paths"`
		}{root, paths})
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
	return nil
}
