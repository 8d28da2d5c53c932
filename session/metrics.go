package session

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteMetrics writes the mntr figures in the Prometheus text format, under
// the names ZooKeeper's Prometheus metrics provider uses (no zk_ prefix);
// the version and server state become labels of an info metric.
func (s *Server) WriteMetrics(w io.Writer) error {
	var b strings.Builder
	info := map[string]string{}
	for _, v := range s.monitorValues() {
		text := fmt.Sprint(v.value)
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			info[v.key] = text
			continue
		}
		kind := "counter"
		if v.gauge {
			kind = "gauge"
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n%s %s\n", v.key, kind, v.key, text)
	}
	fmt.Fprintf(&b, "# TYPE zkraft_info gauge\nzkraft_info{version=%q,server_state=%q} 1\n", info["version"], info["server_state"])
	_, err := io.WriteString(w, b.String())
	return err
}
