package soak

import (
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// partition is the set of directed member pairs whose packets are dropped:
// {a, b} drops what a sends to b. The empty partition heals everything.
type partition map[[2]int]bool

// connected reports whether a and b can talk: TCP needs both directions.
func (p partition) connected(a, b int) bool { return !p[[2]int{a, b}] && !p[[2]int{b, a}] }

// cut drops everything between the members of a and those of b, both ways.
func (p partition) cut(a, b []int) {
	for _, x := range a {
		for _, y := range b {
			p[[2]int{x, y}] = true
			p[[2]int{y, x}] = true
		}
	}
}

// mute drops everything x sends to the others, and nothing they send it.
func (p partition) mute(x int, others []int) {
	for _, y := range others {
		p[[2]int{x, y}] = true
	}
}

func (p partition) String() string {
	var s []string
	for pair := range p {
		s = append(s, fmt.Sprintf("%d>%d", pair[0], pair[1]))
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// applyPartition replaces the filter rules in every member's network
// namespace (the holder's, so they outlive the member's restarts) with
// those p needs: a DROP on the sender's OUTPUT and on the receiver's INPUT
// for each blocked pair. Clients are untouched: their traffic comes from
// the published port's proxy, not from a member's address.
func (c *cluster) applyPartition(p partition) error {
	ip := map[int]string{}
	for _, m := range c.members {
		ip[m.id] = m.ip
	}
	return c.parallel(func(m *member) error {
		var b strings.Builder
		b.WriteString("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
		var rules []string
		for pair := range p {
			if pair[1] == m.id {
				rules = append(rules, "-A INPUT -s "+ip[pair[0]]+"/32 -j DROP")
			}
			if pair[0] == m.id {
				rules = append(rules, "-A OUTPUT -d "+ip[pair[1]]+"/32 -j DROP")
			}
		}
		sort.Strings(rules)
		for _, r := range rules {
			b.WriteString(r + "\n")
		}
		b.WriteString("COMMIT\n")
		cmd := exec.Command("nsenter", "-t", strconv.Itoa(m.netPid), "-n", "iptables-restore")
		cmd.Stdin = strings.NewReader(b.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("member %d: iptables-restore: %w: %s", m.id, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
}
