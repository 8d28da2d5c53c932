package session

import "fmt"

// Figure is one of the figures mntr prints, for the metrics endpoint: Key
// without mntr's zk_ prefix (the name ZooKeeper's Prometheus metrics
// provider uses), Value as mntr prints it, and whether it is a level
// (gauge) rather than a count since the start or the last srst.
type Figure struct {
	Key   string
	Value string
	Gauge bool
}

// Figures returns mntr's figures now, in mntr's order.
func (s *Server) Figures() []Figure {
	vals := s.monitorValues()
	out := make([]Figure, len(vals))
	for i, v := range vals {
		out[i] = Figure{Key: v.key, Value: fmt.Sprint(v.value), Gauge: v.gauge}
	}
	return out
}
