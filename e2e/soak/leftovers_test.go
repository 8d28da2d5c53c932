package soak

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Everything a soak run makes outside its own process carries its owner:
// the image, containers and network carry labels, the host directory is
// named after it. A run that crashed (or was killed by go test's timeout)
// leaves them behind; the next run removes those whose owner is dead, and
// never those of a run still going in another worktree.
const (
	labelKey = "zkraft.soak"       // on every image, container and network
	ownerKey = "zkraft.soak.owner" // on containers and networks: the run's owner token
)

// soakBase is the host directory each run keeps its files under, in a
// subdirectory named after its owner token.
func soakBase() string { return filepath.Join(os.TempDir(), "zkraft-soak") }

// ownerToken names process pid as "pid.starttime" (its start time in clock
// ticks since boot, from /proc), so a pid reused by another process does
// not pass for the run that is gone.
func ownerToken(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	// Fields after the command (which may hold spaces), from the 3rd on.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	return fmt.Sprintf("%d.%s", pid, f[19]), nil
}

// ownerAlive reports whether the process a token names still runs.
func ownerAlive(token string) bool {
	pidText, _, ok := strings.Cut(token, ".")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil {
		return false
	}
	now, err := ownerToken(pid)
	return err == nil && now == token
}

// removeLeftovers removes the containers, networks, mounts and directories
// of earlier runs whose process is gone, and dangling soak images.
func removeLeftovers(logf func(string, ...any)) error {
	var errs []error
	dead := func(kind string, args ...string) []string {
		out, err := dockerOut(args...)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		var ids []string
		for _, line := range strings.Split(out, "\n") {
			id, owner, ok := strings.Cut(strings.TrimSpace(line), " ")
			if ok && !ownerAlive(owner) {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			logf("removing %d %s left by an earlier run", len(ids), kind)
		}
		return ids
	}
	format := `{{.ID}} {{.Label "` + ownerKey + `"}}`
	if ids := dead("containers", "ps", "-a", "--filter", "label="+ownerKey, "--format", format); len(ids) > 0 {
		if _, err := dockerOut(append([]string{"rm", "-f", "-v"}, ids...)...); err != nil {
			errs = append(errs, err)
		}
	}
	if ids := dead("networks", "network", "ls", "--filter", "label="+ownerKey, "--format", format); len(ids) > 0 {
		if _, err := dockerOut(append([]string{"network", "rm"}, ids...)...); err != nil {
			errs = append(errs, err)
		}
	}
	entries, _ := os.ReadDir(soakBase())
	for _, e := range entries {
		if ownerAlive(e.Name()) {
			continue
		}
		dir := filepath.Join(soakBase(), e.Name())
		logf("removing %s, left by an earlier run", dir)
		if err := unmountUnder(dir); err != nil {
			errs = append(errs, err)
			continue // never remove files through a mount still there
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	pruneImages(logf)
	return errors.Join(errs...)
}

// pruneImages removes the soak's images that no tag names any more (the
// ones a rebuild replaced) and no container uses.
func pruneImages(logf func(string, ...any)) {
	if out, err := dockerOut("image", "prune", "-f", "--filter", "label="+labelKey); err != nil {
		logf("docker image prune: %v", err)
	} else if strings.Contains(out, "deleted") {
		logf("removed dangling soak images")
	}
}

// unmountUnder lazily unmounts every mount at or below dir, deepest first
// (a FUSE mount whose server died, the loop-mounted ext4 under it).
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
