package server

import (
	"errors"
	"fmt"
	"strings"
)

// isMemberKey reports whether a zoo.cfg key describes the membership
// (server.N, and the hierarchical quorums' group.N and weight.N), which
// ZooKeeper 3.5+ keeps in the dynamic config file when zoo.cfg names one.
func isMemberKey(k string) bool {
	return strings.HasPrefix(k, "server.") || strings.HasPrefix(k, "group") || strings.HasPrefix(k, "weight")
}

// applyDynamicConfig reads ZooKeeper's dynamic config file
// (dynamicConfigFile=zoo.cfg.dynamic.<version>, which ZooKeeper 3.5+
// writes when reconfig is enabled and rewrites zoo.cfg to point at): its
// server.N lines are the members. As in ZooKeeper, the file must not hold
// a version line (the version is the file name's suffix).
func (s *Config) applyDynamicConfig(path string) error {
	cfg, err := loadZooConfig(path)
	if err != nil {
		return fmt.Errorf("dynamic config file: %w", err)
	}
	for _, k := range cfg.keys {
		v := cfg.values[k]
		switch {
		case k == "version":
			return errors.New("dynamic file shouldn't have version inside")
		case strings.HasPrefix(k, "server."):
			p, err := parseMemberLine(k, v)
			if err != nil {
				return fmt.Errorf("%s: %s=%q: %w", path, k, v, err)
			}
			s.Members = append(s.Members, p)
		case strings.HasPrefix(k, "group") || strings.HasPrefix(k, "weight"):
			return fmt.Errorf("%s: %s: hierarchical quorums are not supported", path, k)
		default:
			return fmt.Errorf("%s: %s is not a membership key", path, k)
		}
	}
	return nil
}
