package console

import (
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// aclJSON is one ACL entry with its permissions as zkCli writes them
// ("cdrwa"), as export files have them too.
type aclJSON = zkjson.ACL

// hiddenHash stands for a digest ACL entry's password hash on the page: a
// hash is a password verifier, open to offline guessing, so the console
// never sends one. setACL takes an entry whose id ends with it to mean the
// node's current entry for that user.
const hiddenHash = "(hash hidden)"

// toACL renders an ACL for the page, digest hashes hidden.
func toACL(list []zk.ACL) []aclJSON {
	out := make([]aclJSON, 0, len(list))
	for _, a := range list {
		id := a.ID
		if a.Scheme == "digest" {
			user, _, _ := strings.Cut(id, ":")
			id = user + ":" + hiddenHash
		}
		out = append(out, aclJSON{Scheme: a.Scheme, ID: id, Perms: zkjson.PermString(a.Perms)})
	}
	return out
}

// fromACL reads the page's ACL entries; an unknown permission letter is
// an error. A digest entry is "user:password" (hashed here, as zkCli's
// addauth would) or "user:(hash hidden)", which keeps the entry of that
// user in current (the node's ACL now).
func fromACL(list []aclJSON, current []zk.ACL) ([]zk.ACL, error) {
	out := make([]zk.ACL, 0, len(list))
	for _, a := range list {
		if a.Scheme == "digest" {
			user, secret, ok := strings.Cut(a.ID, ":")
			if !ok || user == "" {
				return nil, fmt.Errorf("a digest entry is user:password, not %q", a.ID)
			}
			if secret != hiddenHash {
				a.ID = acl.DigestID(user, secret)
			} else if a.ID = existingDigest(current, user); a.ID == "" {
				return nil, fmt.Errorf("digest user %q has no entry to keep; give user:password", user)
			}
		}
		perms, err := zkjson.ParsePerms(a.Perms)
		if err != nil {
			return nil, err
		}
		out = append(out, zk.ACL{Perms: perms, Scheme: a.Scheme, ID: a.ID})
	}
	return out, nil
}

// existingDigest is the id of user's digest entry in list, "" if none.
func existingDigest(list []zk.ACL, user string) string {
	for _, a := range list {
		if u, _, _ := strings.Cut(a.ID, ":"); a.Scheme == "digest" && u == user {
			return a.ID
		}
	}
	return ""
}
