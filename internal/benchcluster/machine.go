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
