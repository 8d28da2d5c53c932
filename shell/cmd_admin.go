package shell

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/internal/cli/zkjson"
	"github.com/zkraft/zkraft/jute"
)

// configNode holds the ensemble's dynamic configuration.
const configNode = "/zookeeper/config"

// adminCommands are session and ensemble commands: close, config, reconfig,
// version, getEphemerals, getAllChildrenNumber.
func adminCommands() []*cmdSpec {
	return []*cmdSpec{
		{name: "close", usage: "", run: runClose},
		{name: "config", usage: "[-c] [-w] [-s]", run: runConfig, json: true, opts: []optSpec{
			{name: "s", desc: "stats"}, {name: "w", desc: "watch"}, {name: "c", desc: "client connection string"}}},
		{name: "reconfig", usage: "[-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | " +
			"[-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]", run: runReconfig, opts: []optSpec{
			{name: "s", desc: "stats"}, {name: "v", hasArg: true, desc: "required current config version"},
			{name: "file", hasArg: true}, {name: "members", hasArg: true},
			{name: "add", hasArg: true}, {name: "remove", hasArg: true}}},
		{name: "version", usage: "", run: runVersion},
		{name: "getEphemerals", usage: "path", run: runGetEphemerals, json: true},
		{name: "getAllChildrenNumber", usage: "path", run: runGetAllChildrenNumber, json: true},
	}
}

func runClose(s *Shell, _ *parsedArgs) error {
	s.closeSession(true)
	return nil
}

func runConfig(s *Shell, p *parsedArgs) error {
	asJSON, err := s.jsonOutput(p)
	if err != nil {
		return err
	}
	var data []byte
	if p.has("w") {
		data, _, _, err = s.zk().GetW(configNode)
	} else {
		data, _, err = s.zk().Get(configNode)
	}
	if err != nil {
		return wrapKeeper(err, configNode)
	}
	if p.has("w") {
		s.sess.noteWatch(configNode, "data")
	}
	_, st, err := s.zk().Exists(configNode)
	if err != nil {
		return wrapKeeper(err, configNode)
	}
	if asJSON {
		out := struct {
			Config *string      `json:"config"`
			Client string       `json:"client,omitempty"`
			Stat   *zkjson.Stat `json:"stat,omitempty"`
		}{}
		out.Config, _ = dataJSON(data)
		if p.has("c") {
			out.Client = clientConfigStr(data)
		}
		if p.has("s") {
			out.Stat = zkjson.StatOf(st)
		}
		return s.printJSON(out)
	}
	if data == nil {
		data = []byte("null")
	}
	if p.has("c") {
		s.printf("%s\n", clientConfigStr(data))
	} else {
		s.printf("%s\n", data)
	}
	if p.has("s") {
		s.printf("%s", statText(st))
	}
	return nil
}

// clientConfigStr is ConfigUtils.getClientConfigStr: the config version
// and the client addresses of every server line.
func clientConfigStr(data []byte) string {
	version := ""
	type srv struct {
		id   int
		addr string
	}
	var servers []srv
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "version" {
			version = value
		}
		if !strings.HasPrefix(key, "server.") {
			continue
		}
		_, client, ok := strings.Cut(value, ";")
		if !ok {
			continue
		}
		if !strings.Contains(client, ":") {
			client = "0.0.0.0:" + client
		}
		id, _ := strconv.Atoi(strings.TrimPrefix(key, "server."))
		servers = append(servers, srv{id, client})
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].id < servers[j].id })
	addrs := make([]string, len(servers))
	for i, sv := range servers {
		addrs[i] = sv.addr
	}
	return version + " " + strings.Join(addrs, ",")
}

// reconfigRequest is ReconfigRequest with Java's null strings for the
// parts not given.
type reconfigRequest struct {
	joining, leaving, members *string
	version                   int64
}

// Encode implements jute.Record.
func (r *reconfigRequest) Encode(w *jute.Writer) {
	for _, s := range []*string{r.joining, r.leaving, r.members} {
		if s == nil {
			w.NullString()
		} else {
			w.String(*s)
		}
	}
	w.Long(r.version)
}

// Decode implements jute.Record; requests are only encoded.
func (r *reconfigRequest) Decode(*jute.Reader) error {
	return fmt.Errorf("reconfigRequest: decode not supported")
}

func runReconfig(s *Shell, p *parsedArgs) error {
	usage := s.usageOf("reconfig")
	if !(p.has("file") || p.has("members")) && !p.has("add") && !p.has("remove") {
		return usage
	}
	req := &reconfigRequest{version: -1}
	if p.has("v") {
		v, err := strconv.ParseInt(p.value("v"), 16, 64)
		if err != nil {
			return failf("-v must be followed by a long (configuration version)")
		}
		req.version = v
	}
	if (p.has("file") || p.has("members")) && (p.has("add") || p.has("remove")) {
		return failf("Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)")
	}
	if p.has("file") && p.has("members") {
		return failf("Can't use -file and -members together (conflicting non-incremental modes)")
	}
	lower := func(k string) *string { v := strings.ToLower(p.value(k)); return &v }
	if p.has("add") {
		req.joining = lower("add")
	}
	if p.has("remove") {
		req.leaving = lower("remove")
	}
	if p.has("members") {
		req.members = lower("members")
	}
	if p.has("file") {
		m, err := membersFromFile(p.value("file"))
		if err != nil {
			return failf("Error processing %s%v", p.value("file"), err)
		}
		req.members = &m
	}
	var resp jute.GetDataResponse
	if err := s.sess.tap.call(jute.OpReconfig, req, &resp, s.opTimeout()); err != nil {
		ce := wrapKeeper(err, "")
		if isCode(err, -102) {
			// zkCli's line, then where the credentials come from.
			ce.msg += "\n" + reconfigAuthHint
		}
		return ce
	}
	if s.jsonSession() {
		out := struct {
			Config *string      `json:"config"`
			Stat   *zkjson.Stat `json:"stat,omitempty"`
		}{}
		out.Config, _ = dataJSON(resp.Data)
		if p.has("s") {
			st := resp.Stat
			out.Stat = zkjson.StatOf(fromJuteStat(&st))
		}
		return s.printJSON(out)
	}
	s.printf("Committed new configuration:\n%s\n", resp.Data)
	if p.has("s") {
		st := resp.Stat
		s.printf("%s", statText(fromJuteStat(&st)))
	}
	return nil
}

// reconfigAuthHint follows a reconfig refused with NoAuth: it says how
// to give the super user's credentials.
const reconfigAuthHint = "reconfig needs the super user's credentials: addauth digest super:PASSWORD, " +
	"or start the shell with --auth digest:super:PASSWORD or $" + cliflags.AuthEnv

// membersFromFile reads the server.N lines of a dynamic config file.
func membersFromFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var members []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "server.") {
			members = append(members, line)
		}
	}
	return strings.Join(members, ","), nil
}

func runVersion(s *Shell, p *parsedArgs) error {
	if len(p.args) > 1 {
		return s.usageOf("version")
	}
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if s.jsonSession() {
		return s.printJSON(struct {
			Version string `json:"version"`
		}{v})
	}
	s.printf("ZooKeeper CLI version: zkraft shell %s (ZooKeeper 3.9 CLI compatible)\n", v)
	return nil
}

func runGetEphemerals(s *Shell, p *parsedArgs) error {
	asJSON, err := s.jsonOutput(p)
	if err != nil {
		return err
	}
	path := "/"
	if len(p.args) >= 2 {
		path = p.args[1]
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	// Like the Java client, getEphemerals ignores the chroot: the prefix and
	// the result are server paths.
	var resp jute.StringsResponse
	if err := s.sess.tap.call(jute.OpGetEphemerals, &jute.PathRequest{Path: path}, &resp, s.opTimeout()); err != nil {
		return wrapKeeper(err, path)
	}
	if asJSON {
		return s.printJSON(append([]string{}, resp.Strings...))
	}
	s.printf("[%s]\n", strings.Join(resp.Strings, ", "))
	return nil
}

func runGetAllChildrenNumber(s *Shell, p *parsedArgs) error {
	path, asJSON, err := s.pathAndFormat(p, "getAllChildrenNumber")
	if err != nil {
		return err
	}
	var resp jute.IntResponse
	if err := s.sess.tap.call(jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: s.serverPath(path)}, &resp, s.opTimeout()); err != nil {
		return wrapKeeper(err, path)
	}
	if asJSON {
		return s.printJSON(struct {
			Path  string `json:"path"`
			Total int32  `json:"total"`
		}{path, resp.N})
	}
	s.printf("%d\n", resp.N)
	return nil
}
