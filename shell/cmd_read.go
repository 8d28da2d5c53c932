package shell

import (
	"encoding/base64"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// getJSON is the --output json form of get.
type getJSON struct {
	Path       string       `json:"path"`
	Data       *string      `json:"data"`
	DataBase64 *string      `json:"dataBase64,omitempty"`
	Stat       *zkjson.Stat `json:"stat,omitempty"`
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
	path, asJSON, err := s.pathAndFormat(p, "get")
	if err != nil {
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
			out.Stat = zkjson.StatOf(st)
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
	path, asJSON, err := s.pathAndFormat(p, "stat")
	if err != nil {
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
			Path string       `json:"path"`
			Stat *zkjson.Stat `json:"stat"`
		}{path, zkjson.StatOf(st)})
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
			Path     string       `json:"path"`
			Children []string     `json:"children"`
			Stat     *zkjson.Stat `json:"stat,omitempty"`
		}{Path: path, Children: append([]string{}, children...)}
		if p.has("s") {
			out.Stat = zkjson.StatOf(st)
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

// pathAndFormat is the common prologue of the read commands: the command
// needs a path argument (else its usage is printed), may ask for JSON
// output, and the path must be valid.
func (s *Shell) pathAndFormat(p *parsedArgs, name string) (path string, asJSON bool, err error) {
	if len(p.args) < 2 {
		return "", false, s.usageOf(name)
	}
	if asJSON, err = s.jsonOutput(p); err != nil {
		return "", false, err
	}
	path = p.args[1]
	if err := validatePath(path, false); err != nil {
		return "", false, err
	}
	return path, asJSON, nil
}
