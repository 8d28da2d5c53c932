package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

// options are mkdeb's flags.
type options struct {
	bin     string // the binary to install as /usr/bin/zkraft
	arch    string // Debian architecture
	version string // git describe's version
	dir     string // the packaging/ directory with the unit, config and scripts
	out     string // where the .deb goes
}

// build writes the package into o.out and returns its path.
func build(o options) (string, error) {
	if _, err := os.Stat(o.bin); err != nil {
		return "", fmt.Errorf("the binary: %w", err)
	}
	version, err := debVersion(o.version)
	if err != nil {
		return "", err
	}
	info := packageInfo(o, version)
	info.MTime, err = sourceDate()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return "", fmt.Errorf("output directory: %w", err)
	}
	packager := deb.Default
	path := filepath.Join(o.out, packager.ConventionalFileName(info))
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return "", fmt.Errorf("create the package: %w", err)
	}
	err = packager.Package(info, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return "", fmt.Errorf("package %s: %w", path, err)
	}
	return path, nil
}

// packageInfo is the package's metadata and contents.
func packageInfo(o options, version string) *nfpm.Info {
	in := func(name string) string { return filepath.Join(o.dir, name) }
	return &nfpm.Info{
		Name:          "zkraft",
		Arch:          o.arch,
		Platform:      "linux",
		Version:       version,
		VersionSchema: "none", // debVersion made it a Debian version already
		Section:       "net",
		Priority:      "optional",
		Maintainer:    "zkraft developers <zkraft@users.noreply.github.com>",
		Homepage:      "https://github.com/zkraft/zkraft",
		License:       "Apache-2.0",
		Description: "ZooKeeper-compatible coordination server\n" +
			"zkraft speaks Apache ZooKeeper's client protocol and replicates its\n" +
			"state with Raft; existing ZooKeeper clients connect to it unchanged.\n" +
			"It reads ZooKeeper's zoo.cfg and myid.",
		Overridables: nfpm.Overridables{
			Depends: []string{"adduser"},
			Contents: files.Contents{
				{Source: o.bin, Destination: "/usr/bin/zkraft", FileInfo: &files.ContentFileInfo{Mode: 0o755}},
				{Source: in("zkraft.service"), Destination: "/usr/lib/systemd/system/zkraft.service", FileInfo: &files.ContentFileInfo{Mode: 0o644}},
				{Source: in("zoo.cfg"), Destination: "/etc/zkraft/zoo.cfg", Type: files.TypeConfig, FileInfo: &files.ContentFileInfo{Mode: 0o640}},
			},
			Scripts: nfpm.Scripts{
				PostInstall: in("deb/postinst"),
				PreRemove:   in("deb/prerm"),
				PostRemove:  in("deb/postrm"),
			},
		},
	}
}

// sourceDate is the time stamped on every file: SOURCE_DATE_EPOCH when set
// (reproducible builds), else now.
func sourceDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, errors.New("SOURCE_DATE_EPOCH is not a number of seconds")
	}
	return time.Unix(sec, 0).UTC(), nil
}
