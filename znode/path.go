package znode

import (
	"strings"
	"unicode/utf8"

	"github.com/zkraft/zkraft/jute"
)

// Paths of ZooKeeper's system nodes.
const (
	RootPath   = "/"
	ProcPath   = "/zookeeper"
	QuotaPath  = "/zookeeper/quota"
	ConfigPath = "/zookeeper/config"
)

// ValidatePath applies ZooKeeper's PathUtils.validatePath rules: the path is
// absolute, has no trailing slash (except "/"), no empty, "." or ".."
// segments, no NUL or control characters and none of the characters Java
// rejects (U+007F-U+009F, U+D800-U+F8FF incl. every supplementary character,
// U+FFF0-U+FFFF). Invalid UTF-8 is rejected too. The error is
// jute.ErrBadArguments.
func ValidatePath(path string) error {
	if path == "" || path[0] != '/' {
		return jute.ErrBadArguments
	}
	if len(path) == 1 {
		return nil
	}
	if path[len(path)-1] == '/' {
		return jute.ErrBadArguments
	}
	for rest := path[1:]; ; {
		seg, tail, more := strings.Cut(rest, "/")
		if seg == "" || seg == "." || seg == ".." {
			return jute.ErrBadArguments
		}
		if !more {
			break
		}
		rest = tail
	}
	for _, r := range path {
		if r == utf8.RuneError || badRune(r) {
			return jute.ErrBadArguments
		}
	}
	return nil
}

// badRune reports the characters PathUtils rejects.
func badRune(r rune) bool {
	return r <= 0x1f || (r >= 0x7f && r <= 0x9f) || (r >= 0xd800 && r <= 0xf8ff) ||
		r >= 0xfff0
}

// splitPath returns the parent path as ZooKeeper computes it (everything
// before the last slash, "" for children of the root) and the child name.
// ok is false when path has no slash.
func splitPath(path string) (parent, name string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}

// parentOf returns the parent path of path as splitPath does.
func parentOf(path string) string {
	parent, _, _ := splitPath(path)
	return parent
}

// eventPath maps ZooKeeper's internal parent name "" to "/".
func eventPath(p string) string {
	if p == "" {
		return RootPath
	}
	return p
}

// isSpecial reports the nodes that can never be deleted.
func isSpecial(path string) bool {
	return path == RootPath || path == ProcPath || path == QuotaPath || path == ConfigPath
}
