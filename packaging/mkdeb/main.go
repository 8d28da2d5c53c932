// Command mkdeb builds zkraft's Debian package with nfpm, used as a Go
// library so that no packaging tool has to be installed: the static
// binary as /usr/bin/zkraft, packaging/zkraft.service as the systemd
// unit, packaging/zoo.cfg as the conffile /etc/zkraft/zoo.cfg, and
// packaging/deb's maintainer scripts, which make the zkraft system user
// and /var/lib/zkraft. `make deb` runs it on the binary `make release`
// built:
//
//	go run ./packaging/mkdeb -bin dist/zkraft-v1.0.0-linux-amd64 -arch amd64 -version v1.0.0 -out dist
//
// It prints the path of the package it wrote.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the zkraft binary to package (static, for -arch)")
	flag.StringVar(&o.arch, "arch", "amd64", "Debian architecture: amd64 or arm64")
	flag.StringVar(&o.version, "version", "", "zkraft's version, as git describe --tags prints it (v1.2.0, v1.2.0-3-gabcdef0)")
	flag.StringVar(&o.dir, "packaging", "", "the packaging/ directory (default: the one beside this program's source, found from the working directory)")
	flag.StringVar(&o.out, "out", "dist", "directory to write the .deb into")
	flag.Parse()
	if o.bin == "" || o.version == "" {
		fmt.Fprintln(os.Stderr, "mkdeb: -bin and -version are required")
		flag.Usage()
		os.Exit(2)
	}
	if o.dir == "" {
		o.dir = "packaging"
	}
	path, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdeb:", err)
		os.Exit(1)
	}
	fmt.Println(filepath.Clean(path))
}
