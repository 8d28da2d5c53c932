package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/acl"
)

// digestCommand is DigestAuthenticationProvider's main: for each
// user:password it prints the digest identity, user:base64(sha1(
// user:password)), the form of superDigest and of digest ACLs, in
// ZooKeeper's "user:password->user:digest" format.
func digestCommand() *cli.Command {
	return &cli.Command{
		Name:      "digest",
		Usage:     "print the superDigest / digest ACL form of user:password",
		ArgsUsage: "USER:PASSWORD...",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return errors.New("digest: want user:password")
			}
			for _, cred := range c.Args().Slice() {
				fmt.Fprintf(c.App.Writer, "%s->%s\n", cred, acl.DigestFromAuth(cred))
			}
			return nil
		},
	}
}
