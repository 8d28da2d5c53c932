package main

import (
	"fmt"
	"strings"
)

// debVersion turns what `git describe --tags --always --dirty` prints into
// a Debian version that sorts as the releases do:
//
//	v1.2.0                -> 1.2.0
//	v1.2.0-rc1            -> 1.2.0~rc1             (before 1.2.0)
//	v1.2.0-3-gabcdef0     -> 1.2.0+git3.gabcdef0   (after 1.2.0)
//	v1.2.0-dirty          -> 1.2.0+dirty
//	abcdef0[-dirty]       -> 0.0.0+gabcdef0[.dirty] (no tag yet)
//
// A Debian upstream version may hold only alphanumerics and . + ~, and no
// hyphen (that would start a Debian revision).
func debVersion(describe string) (string, error) {
	v := strings.TrimSpace(describe)
	dirty := strings.HasSuffix(v, "-dirty")
	v = strings.TrimSuffix(v, "-dirty")
	if v == "" {
		return "", fmt.Errorf("version %q: empty", describe)
	}
	var out string
	if tag, ok := strings.CutPrefix(v, "v"); ok && tag != "" && tag[0] >= '0' && tag[0] <= '9' {
		base, pre := tag, ""
		// git describe appends -<commits>-g<hash> after the tag.
		var commits, hash string
		if parts := strings.Split(tag, "-"); len(parts) >= 3 && strings.HasPrefix(parts[len(parts)-1], "g") && isDigits(parts[len(parts)-2]) {
			commits, hash = parts[len(parts)-2], parts[len(parts)-1]
			base = strings.Join(parts[:len(parts)-2], "-")
		}
		base, pre, _ = strings.Cut(base, "-")
		out = base
		if pre != "" {
			out += "~" + strings.ReplaceAll(pre, "-", ".")
		}
		var meta []string
		if commits != "" {
			meta = append(meta, "git"+commits, hash)
		}
		if dirty {
			meta = append(meta, "dirty")
		}
		if len(meta) > 0 {
			out += "+" + strings.Join(meta, ".")
		}
	} else {
		out = "0.0.0+g" + v
		if dirty {
			out += ".dirty"
		}
	}
	for _, r := range out {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune(".+~", r)) {
			return "", fmt.Errorf("version %q: %q is not a Debian version", describe, out)
		}
	}
	return out, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
