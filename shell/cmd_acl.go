package shell

import (
	"sort"
	"strings"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
	"github.com/zkraft/zkraft/jute"
)

// aclCommands are the access-control commands: getAcl, setAcl, addauth,
// whoami.
func aclCommands() []*cmdSpec {
	return []*cmdSpec{
		{name: "getAcl", usage: "[-s] path", run: runGetACL, json: true, opts: []optSpec{
			{name: "s", desc: "stats"}}},
		{name: "setAcl", usage: "[-s] [-v version] [-R] path acl", run: runSetACL, opts: []optSpec{
			{name: "s", desc: "stats"}, {name: "v", hasArg: true, desc: "version"},
			{name: "R", desc: "recursive"}}},
		{name: "addauth", usage: "scheme auth", run: runAddAuth},
		{name: "whoami", usage: "", run: runWhoAmI, json: true},
	}
}

func runGetACL(s *Shell, p *parsedArgs) error {
	path, asJSON, err := s.pathAndFormat(p, "getAcl")
	if err != nil {
		return err
	}
	acl, st, err := s.zk().GetACL(path)
	if err != nil {
		return wrapKeeper(err, path)
	}
	if asJSON {
		out := struct {
			Path string       `json:"path"`
			ACL  []aclJSON    `json:"acl"`
			Stat *zkjson.Stat `json:"stat,omitempty"`
		}{Path: path, ACL: []aclJSON{}}
		for _, a := range acl {
			out.ACL = append(out.ACL, aclJSON{Scheme: a.Scheme, ID: a.ID, Perms: permString(a.Perms)})
		}
		if p.has("s") {
			out.Stat = zkjson.StatOf(st)
		}
		return s.printJSON(out)
	}
	var b strings.Builder
	for _, a := range acl {
		b.WriteString(aclText(a))
		b.WriteByte('\n')
	}
	if p.has("s") {
		b.WriteString(statText(st))
	}
	s.printf("%s", b.String())
	return nil
}

func runSetACL(s *Shell, p *parsedArgs) error {
	if len(p.args) < 3 {
		return s.usageOf("setAcl")
	}
	path := p.args[1]
	acl := parseACL(p.args[2], s.stderr())
	version, err := parseVersion(p)
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	if len(acl) == 0 {
		return failf("%s", "Acl is not valid : "+path)
	}
	if p.has("R") {
		// ZKUtil.visitSubTreeDFS order; a failure on one node is printed
		// (without a newline, as zkCli does) and the walk goes on.
		if _, _, err := s.zk().Get(path); err != nil {
			return wrapKeeper(err, path)
		}
		set := func(n string) {
			if _, err := s.zk().SetACL(n, acl, version); err != nil {
				code, _ := keeperCode(err)
				s.printf("%s", keeperMessage(code, n))
			}
		}
		set(path)
		var visit func(string)
		visit = func(n string) {
			children, _, err := s.zk().Children(n)
			if err != nil {
				return
			}
			sort.Strings(children)
			for _, c := range children {
				set(joinPath(n, c))
			}
			for _, c := range children {
				visit(joinPath(n, c))
			}
		}
		visit(path)
		return nil
	}
	st, err := s.zk().SetACL(path, acl, version)
	if err != nil {
		return wrapKeeper(err, path)
	}
	if p.has("s") {
		s.printf("%s", statText(st))
	}
	return nil
}

func runAddAuth(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("addauth")
	}
	var auth []byte
	if len(p.args) >= 3 {
		auth = []byte(p.args[2])
	}
	// zkCli prints nothing either way: a rejected credential makes the
	// server close the session, reported as an AuthFailed event.
	_ = s.zk().AddAuth(p.args[1], auth)
	return nil
}

func runWhoAmI(s *Shell, p *parsedArgs) error {
	asJSON, err := s.jsonOutput(p)
	if err != nil {
		return err
	}
	var resp jute.WhoAmIResponse
	if err := s.sess.tap.call(jute.OpWhoAmI, nil, &resp, s.opTimeout()); err != nil {
		return wrapKeeper(err, "")
	}
	if asJSON {
		type info struct {
			Scheme string `json:"scheme"`
			User   string `json:"user"`
		}
		out := []info{}
		for _, c := range resp.ClientInfo {
			out = append(out, info{c.AuthScheme, c.User})
		}
		return s.printJSON(out)
	}
	var b strings.Builder
	b.WriteString("Auth scheme: User\n")
	for _, c := range resp.ClientInfo {
		b.WriteString(c.AuthScheme + ": " + c.User + "\n")
	}
	s.printf("%s", b.String())
	return nil
}
