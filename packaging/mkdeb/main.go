// Command mkdeb builds zkraft's Debian package with nfpm, used as a Go
// library so that no packaging tool has to be installed: the static
// binary as /usr/bin/zkraft, packaging/zkraft.service as the systemd
// unit, packaging/zoo.cfg as the conffile /etc/zkraft/zoo.cfg, and
// packaging/deb's maintainer scripts, which make the zkraft system user
// and /var/lib/zkraft. `make deb` runs it on the binary `make release`
// built. packaging/ is a Go module of its own, so that nfpm and what it
// needs stay out of the server's go.mod; run it from there:
//
//	cd packaging && go run ./mkdeb -bin ../dist/zkraft-v1.0.0-linux-amd64 -arch amd64 -version v1.0.0 -out ../dist
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
	flag.StringVar(&o.dir, "packaging", ".", "the packaging/ directory, with zkraft.service, zoo.cfg and deb/ (go run ./mkdeb runs in it)")
	flag.StringVar(&o.out, "out", "dist", "directory to write the .deb into")
	flag.Parse()
	if o.bin == "" || o.version == "" {
		fmt.Fprintln(os.Stderr, "mkdeb: -bin and -version are required")
		flag.Usage()
		os.Exit(2)
	}
	path, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdeb:", err)
		os.Exit(1)
	}
	fmt.Println(filepath.Clean(path))
}
