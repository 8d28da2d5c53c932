package soak

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// requireHostTools skips t on a developer's machine, and fails it in CI,
// unless this process can make loop devices, mounts and FUSE file systems
// (root, mkfs.ext4, mount, /dev/fuse).
func requireHostTools(t *testing.T) {
	t.Helper()
	testenv.Require(t, missingHostTools())
}

// requireDocker is requireHostTools plus a working Docker engine and the
// tools that reach into its containers' network namespaces.
func requireDocker(t *testing.T) {
	t.Helper()
	testenv.Require(t, errors.Join(missingHostTools(), missingDocker()))
}

func missingHostTools() error {
	var errs []error
	if os.Geteuid() != 0 {
		errs = append(errs, errors.New("not running as root (loop devices, mounts and FUSE need it)"))
	}
	for _, tool := range []string{"mkfs.ext4", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			errs = append(errs, fmt.Errorf("%s not found (Debian: e2fsprogs, mount)", tool))
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		errs = append(errs, fmt.Errorf("no /dev/fuse: %w", err))
	}
	return errors.Join(errs...)
}

func missingDocker() error {
	var errs []error
	for _, tool := range []string{"docker", "nsenter", "iptables-restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			errs = append(errs, fmt.Errorf("%s not found (Debian: docker.io, util-linux, iptables)", tool))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("the Docker engine is not usable (docker version: %w: %s)", err, strings.TrimSpace(string(out)))
	}
	return nil
}
