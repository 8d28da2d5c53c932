package shell

import (
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// treeCommand is the shell's own "tree [-d depth] path": the subtree drawn
// with box characters, children sorted.
func treeCommand() *cmdSpec {
	return &cmdSpec{name: "tree", usage: "[-d depth] path", run: runTree, json: true,
		opts: []optSpec{{name: "d", hasArg: true, desc: "maximum depth"}}}
}

// treeNode is the --output json form of tree.
type treeNode struct {
	Name     string      `json:"name"`
	Path     string      `json:"path"`
	Children []*treeNode `json:"children,omitempty"`
}

func runTree(s *Shell, p *parsedArgs) error {
	path := "/"
	if len(p.args) >= 2 {
		path = p.args[1]
	}
	depth := -1
	if p.has("d") {
		n, err := parseInt(p.value("d"))
		if err != nil || n < 0 {
			return failf("-d argument must be a non-negative int value")
		}
		depth = n
	}
	asJSON, err := s.jsonOutput(p)
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	root, err := s.walkTree(path, depth)
	if err != nil {
		return err
	}
	if asJSON {
		return s.printJSON(root)
	}
	var b strings.Builder
	b.WriteString(path + "\n")
	drawTree(&b, root.Children, "")
	s.printf("%s", b.String())
	return nil
}

// walkTree reads the subtree at path down to depth levels (-1: all). Nodes
// deleted during the walk are skipped.
func (s *Shell) walkTree(path string, depth int) (*treeNode, error) {
	name := path[strings.LastIndex(path, "/")+1:]
	if path == "/" {
		name = "/"
	}
	n := &treeNode{Name: name, Path: path}
	if depth == 0 {
		if ok, _, err := s.zk().Exists(path); err != nil || !ok {
			if err == nil {
				err = zk.ErrNoNode
			}
			return nil, wrapKeeper(err, path)
		}
		return n, nil
	}
	children, _, err := s.zk().Children(path)
	if err != nil {
		return nil, wrapKeeper(err, path)
	}
	sort.Strings(children)
	for _, c := range children {
		child, err := s.walkTree(joinPath(path, c), depth-1)
		if isCode(err, -101) {
			continue
		}
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, child)
	}
	return n, nil
}

func drawTree(b *strings.Builder, nodes []*treeNode, prefix string) {
	for i, n := range nodes {
		branch, next := "├── ", "│   "
		if i == len(nodes)-1 {
			branch, next = "└── ", "    "
		}
		b.WriteString(prefix + branch + n.Name + "\n")
		drawTree(b, n.Children, prefix+next)
	}
}

func parseInt(s string) (int, error) {
	var n int
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, failf("not a number: %s", s)
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			return 0, failf("number too large: %s", s)
		}
	}
	if s == "" {
		return 0, failf("empty number")
	}
	return n, nil
}

// fromJuteStat converts a Jute Stat into go-zookeeper's.
func fromJuteStat(st *jute.Stat) *zk.Stat {
	return &zk.Stat{
		Czxid: st.Czxid, Mzxid: st.Mzxid, Ctime: st.Ctime, Mtime: st.Mtime,
		Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion,
		EphemeralOwner: st.EphemeralOwner, DataLength: st.DataLength,
		NumChildren: st.NumChildren, Pzxid: st.Pzxid,
	}
}
