package server

import (
	"fmt"
	"io"

	"github.com/zkraft/zkraft/internal/zookeeper/javaprops"
)

// zooConfig is a parsed zoo.cfg: ZooKeeper's Java-properties key=value
// format. Keys keep their order for logging.
type zooConfig struct {
	keys   []string
	values map[string]string
}

// parseZooConfig reads a zoo.cfg (internal/zookeeper/javaprops: blank lines and # or
// ! comments skipped, values trimmed, as java.util.Properties does).
func parseZooConfig(r io.Reader) (*zooConfig, error) {
	p, err := javaprops.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("zoo.cfg %w", err)
	}
	return &zooConfig{keys: p.Keys, values: p.Values}, nil
}

func loadZooConfig(path string) (*zooConfig, error) {
	p, err := javaprops.Load(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &zooConfig{keys: p.Keys, values: p.Values}, nil
}
