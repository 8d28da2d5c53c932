// Package javaprops reads the Java-properties files ZooKeeper uses for its
// configuration (zoo.cfg) and its clients' (zkCli -client-configuration):
// key=value (or key:value) lines, # and ! comments, values trimmed.
package javaprops

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Props is a parsed file; Keys keeps the keys' first-appearance order.
type Props struct {
	Keys   []string
	Values map[string]string
}

// Parse reads properties from r; a later value of a key replaces an
// earlier one, as java.util.Properties does.
func Parse(r io.Reader) (*Props, error) {
	p := &Props{Values: make(map[string]string)}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == '!' {
			continue
		}
		i := strings.IndexAny(s, "=:")
		if i <= 0 {
			return nil, fmt.Errorf("line %d: %q is not key=value", line, s)
		}
		k, v := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		if _, seen := p.Values[k]; !seen {
			p.Keys = append(p.Keys, k)
		}
		p.Values[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read properties: %w", err)
	}
	return p, nil
}

// Load parses the file at path.
func Load(path string) (*Props, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *fs.PathError: "open <path>: <reason>"
	}
	defer f.Close()
	return Parse(f)
}
