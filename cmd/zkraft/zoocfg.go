package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// zooConfig is a parsed zoo.cfg: ZooKeeper's Java-properties key=value
// format. Keys keep their order for logging.
type zooConfig struct {
	keys   []string
	values map[string]string
}

// parseZooConfig reads a zoo.cfg. Blank lines and lines starting with # or
// ! are comments; values are trimmed, as java.util.Properties does.
func parseZooConfig(r io.Reader) (*zooConfig, error) {
	cfg := &zooConfig{values: make(map[string]string)}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == '!' {
			continue
		}
		k, v, ok := cutProperty(s)
		if !ok {
			return nil, fmt.Errorf("zoo.cfg line %d: %q is not key=value", line, s)
		}
		if _, seen := cfg.values[k]; !seen {
			cfg.keys = append(cfg.keys, k)
		}
		cfg.values[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read zoo.cfg: %w", err)
	}
	return cfg, nil
}

func cutProperty(s string) (key, value string, ok bool) {
	i := strings.IndexAny(s, "=:")
	if i <= 0 {
		return "", "", false
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:]), true
}

func loadZooConfig(path string) (*zooConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	return parseZooConfig(f)
}
