package benchcluster

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// StealTime is the CPU time the hypervisor has given to other guests
// since boot, over all CPUs; 0 where /proc/stat is not available.
func StealTime() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	return parseSteal(string(b))
}

// parseSteal reads the steal column of /proc/stat's "cpu" line (in
// USER_HZ ticks); 0 when it is missing.
func parseSteal(stat string) time.Duration {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	steal, _ := strconv.Atoi(f[8])
	return time.Duration(steal) * time.Second / 100
}

// LoadAverage is the machine's one-minute load average from
// /proc/loadavg (0 where it cannot be read): how busy the machine was
// when a figure was taken, for the record beside it.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// ListenOverflows is how many times, since boot, a connection completed
// its TCP handshake while its listener's accept queue was full (TcpExt
// ListenOverflows in /proc/net/netstat; 0 where it cannot be read): the
// kernel then drops it, and the client's connection waits for a
// retransmission a second or more later. A storm of reconnections that a
// server does not accept fast enough shows here.
func ListenOverflows() int64 {
	b, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return 0
	}
	return parseNetstat(string(b), "TcpExt:", "ListenOverflows")
}

// parseNetstat returns field of the section prefix in /proc/net/netstat's
// text: a line of names followed by a line of values.
func parseNetstat(text, prefix, field string) int64 {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], prefix) || !strings.HasPrefix(lines[i+1], prefix) {
			continue
		}
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		for j, n := range names {
			if n == field && j < len(values) {
				v, _ := strconv.ParseInt(values[j], 10, 64)
				return v
			}
		}
	}
	return 0
}
