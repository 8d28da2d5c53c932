package shell

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Quota znodes (org.apache.zookeeper.Quotas).
const (
	quotaRoot = "/zookeeper/quota"
	limitNode = "zookeeper_limits"
	statNode  = "zookeeper_stats"
)

// quotaCommands are setquota, listquota and delquota, which read and write
// the quota znodes as zkCli does.
func quotaCommands() []*cmdSpec {
	group := func(hasArg bool) []optSpec {
		return []optSpec{
			{name: "n", hasArg: hasArg, desc: "num soft quota", group: 1},
			{name: "b", hasArg: hasArg, desc: "bytes soft quota", group: 1},
			{name: "N", hasArg: hasArg, desc: "num hard quota", group: 1},
			{name: "B", hasArg: hasArg, desc: "bytes hard quota", group: 1},
		}
	}
	return []*cmdSpec{
		{name: "setquota", usage: "-n|-b|-N|-B val path", run: runSetQuota, opts: group(true)},
		{name: "listquota", usage: "path", run: runListQuota},
		{name: "delquota", usage: "[-n|-b|-N|-B] path", run: runDelQuota, opts: group(false)},
	}
}

// statsTrack is org.apache.zookeeper.StatsTrack: "count=..,bytes=.." plus
// optional hard limits.
type statsTrack map[string]int64

var pairsSep = regexp.MustCompile(`[,;]+`)

func parseStatsTrack(b []byte) statsTrack {
	st := statsTrack{}
	if len(b) == 0 {
		return st
	}
	for _, kv := range pairsSep.Split(string(b), -1) {
		parts := strings.Split(kv, "=")
		if len(parts) < 2 || parts[0] == "" {
			continue
		}
		v := int64(-1)
		if parts[1] != "" {
			if n, err := strconv.ParseInt(parts[1], 10, 64); err == nil {
				v = n
			}
		}
		st[parts[0]] = v
	}
	return st
}

func (st statsTrack) get(k string) int64 {
	if v, ok := st[k]; ok {
		return v
	}
	return -1
}

// String is StatsTrack.toString: count and bytes first, then the other
// keys sorted after an extra "=".
func (st statsTrack) String() string {
	var b strings.Builder
	b.WriteString("count=" + strconv.FormatInt(st.get("count"), 10))
	b.WriteString(",bytes=" + strconv.FormatInt(st.get("bytes"), 10))
	var keys []string
	for k := range st {
		if k != "count" && k != "bytes" {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		b.WriteString("=")
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString(";" + k + "=" + strconv.FormatInt(st[k], 10))
		}
	}
	return b.String()
}

func runSetQuota(s *Shell, p *parsedArgs) error {
	if !p.has("n") && !p.has("b") && !p.has("N") && !p.has("B") {
		return failf("org.apache.commons.cli.MissingOptionException: Missing required option: " +
			"[-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota]")
	}
	if len(p.args) < 2 {
		return s.usageOf("setquota")
	}
	path := p.args[1]
	if strings.HasPrefix(path, quotaRoot) {
		s.eprintf("cannot set a quota under the path: %s\n", quotaRoot)
		return nil
	}
	quota := statsTrack{"count": -1, "bytes": -1, "countHardLimit": -1, "byteHardLimit": -1}
	for _, o := range []struct {
		flag, key string
		count     bool
	}{{"n", "count", true}, {"b", "bytes", false}, {"N", "countHardLimit", true}, {"B", "byteHardLimit", false}} {
		if !p.has(o.flag) {
			continue
		}
		v, err := strconv.ParseInt(p.value(o.flag), 10, 64)
		if err != nil || o.count && (v < -1<<31 || v > 1<<31-1) {
			s.eprintf("NumberFormatException happens when parsing the option value\n")
			return nil
		}
		if o.count && v <= 0 {
			s.eprintf("the num quota must be greater than zero\n")
			return nil
		}
		if !o.count && v < 0 {
			s.eprintf("the bytes quota must be greater than or equal to zero\n")
			return nil
		}
		quota[o.key] = v
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	return s.createQuota(path, quota)
}

// createQuota is SetQuotaCommand.createQuota.
func (s *Shell) createQuota(path string, quota statsTrack) error {
	c := s.zk()
	ok, _, err := c.Exists(path)
	if err != nil {
		return wrapKeeper(err, path)
	}
	if !ok {
		return failf("%s does not exist.", path)
	}
	if err := s.checkQuotaNesting(path); err != nil {
		return err
	}
	if ok, _, err := c.Exists(quotaRoot); err == nil && !ok {
		_, _ = c.Create("/zookeeper", nil, 0, zk.WorldACL(zk.PermAll))
		_, _ = c.Create(quotaRoot, nil, 0, zk.WorldACL(zk.PermAll))
	}
	qp := quotaRoot
	for _, part := range strings.Split(path, "/")[1:] {
		qp += "/" + part
		if ok, _, err := c.Exists(qp); err == nil && !ok {
			if _, err := c.Create(qp, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !isCode(err, -110) {
				return wrapKeeper(err, qp)
			}
		}
	}
	statPath := qp + "/" + statNode
	limitPath := qp + "/" + limitNode
	ok, _, err = c.Exists(limitPath)
	if err != nil {
		return wrapKeeper(err, limitPath)
	}
	if !ok {
		if _, err := c.Create(limitPath, []byte(quota.String()), 0, zk.WorldACL(zk.PermAll)); err != nil {
			return wrapKeeper(err, limitPath)
		}
		if _, err := c.Create(statPath, []byte(statsTrack{"count": 0, "bytes": 0}.String()), 0, zk.WorldACL(zk.PermAll)); err != nil {
			return wrapKeeper(err, statPath)
		}
		return s.checkQuota(limitPath, statPath)
	}
	data, _, err := c.Get(limitPath)
	if err != nil {
		return wrapKeeper(err, limitPath)
	}
	cur := parseStatsTrack(data)
	for k, v := range quota {
		if v > -1 {
			cur[k] = v
		}
	}
	if err := s.warnQuota(cur, statPath); err != nil {
		return err
	}
	if _, err := c.Set(limitPath, []byte(cur.String()), -1); err != nil {
		return wrapKeeper(err, limitPath)
	}
	return nil
}

// checkQuota re-reads the new limit and stat nodes and warns when the limit
// is already exceeded.
func (s *Shell) checkQuota(limitPath, statPath string) error {
	data, _, err := s.zk().Get(limitPath)
	if err != nil {
		return wrapKeeper(err, limitPath)
	}
	return s.warnQuota(parseStatsTrack(data), statPath)
}

func (s *Shell) warnQuota(q statsTrack, statPath string) error {
	data, _, err := s.zk().Get(statPath)
	if err != nil {
		return wrapKeeper(err, statPath)
	}
	st := parseStatsTrack(data)
	if q.get("count") > -1 && q.get("count") < st.get("count") ||
		q.get("countHardLimit") > -1 && q.get("countHardLimit") < st.get("count") {
		s.printf("[Warning]: the count quota you create is less than the existing count:%d\n", st.get("count"))
	}
	if q.get("bytes") > -1 && q.get("bytes") < st.get("bytes") ||
		q.get("byteHardLimit") > -1 && q.get("byteHardLimit") < st.get("bytes") {
		s.printf("[Warning]: the bytes quota you create is less than the existing bytes:%d\n", st.get("bytes"))
	}
	return nil
}

// checkQuotaNesting refuses a quota above or below an existing one
// (checkIfChildQuota / checkIfParentQuota).
func (s *Shell) checkQuotaNesting(path string) error {
	c := s.zk()
	// Children: any limit node strictly below quotaRoot+path.
	var walk func(n string) error
	walk = func(n string) error {
		children, _, err := c.Children(n)
		if err != nil {
			return nil
		}
		for _, ch := range children {
			if n != quotaRoot+path && ch == limitNode {
				return failf("%s has a child %s which has a quota", path, strings.TrimPrefix(n, quotaRoot))
			}
		}
		for _, ch := range children {
			if err := walk(joinPath(n, ch)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(quotaRoot + path); err != nil {
		return err
	}
	parts := strings.Split(path, "/")
	qp := quotaRoot
	for i := 1; i < len(parts)-1; i++ {
		qp += "/" + parts[i]
		children, _, err := c.Children(qp)
		if err != nil || len(children) == 0 {
			return nil
		}
		for _, ch := range children {
			if qp != quotaRoot+path && ch == limitNode {
				return failf("%s has a parent %s which has a quota", path, strings.TrimPrefix(qp, quotaRoot))
			}
		}
	}
	return nil
}

func runListQuota(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("listquota")
	}
	path := p.args[1]
	limitPath := quotaRoot + path + "/" + limitNode
	s.eprintf("absolute path is %s\n", limitPath)
	data, _, err := s.zk().Get(limitPath)
	if isCode(err, -101) {
		s.eprintf("quota for %s does not exist.\n", path)
		return nil
	}
	if err != nil {
		return wrapKeeper(err, limitPath)
	}
	statPath := quotaRoot + path + "/" + statNode
	sdata, _, err := s.zk().Get(statPath)
	if isCode(err, -101) {
		s.eprintf("quota for %s does not exist.\n", path)
		return nil
	}
	if err != nil {
		return wrapKeeper(err, statPath)
	}
	s.printf("Output quota for %s %s\n", path, parseStatsTrack(data))
	s.printf("Output stat for %s %s\n", path, parseStatsTrack(sdata))
	return nil
}

func runDelQuota(s *Shell, p *parsedArgs) error {
	if len(p.args) < 2 {
		return s.usageOf("delquota")
	}
	path := p.args[1]
	c := s.zk()
	parentPath := quotaRoot + path
	limitPath := parentPath + "/" + limitNode
	ok, _, err := c.Exists(limitPath)
	if err != nil {
		return wrapKeeper(err, limitPath)
	}
	if !ok {
		s.printf("Quota does not exist for %s\n", path)
		return nil
	}
	data, _, err := c.Get(limitPath)
	if isCode(err, -101) {
		s.eprintf("quota for %s does not exist.\n", path)
		return nil
	}
	if err != nil {
		return wrapKeeper(err, limitPath)
	}
	if !p.has("n") && !p.has("b") && !p.has("N") && !p.has("B") {
		children, _, err := c.Children(parentPath)
		if err != nil {
			return wrapKeeper(err, parentPath)
		}
		for _, ch := range children {
			if err := c.Delete(parentPath+"/"+ch, -1); err != nil {
				return wrapKeeper(err, parentPath+"/"+ch)
			}
		}
		// trimProcQuotas: remove now-empty quota parents up to quotaRoot.
		for n := parentPath; n != quotaRoot; n = n[:strings.LastIndex(n, "/")] {
			children, _, err := c.Children(n)
			if err != nil {
				return wrapKeeper(err, n)
			}
			if len(children) > 0 {
				break
			}
			if err := c.Delete(n, -1); err != nil {
				return wrapKeeper(err, n)
			}
		}
		return nil
	}
	st := parseStatsTrack(data)
	for flag, key := range map[string]string{"n": "count", "b": "bytes", "N": "countHardLimit", "B": "byteHardLimit"} {
		if p.has(flag) {
			st[key] = -1
		}
	}
	if _, err := c.Set(limitPath, []byte(st.String()), -1); err != nil {
		return wrapKeeper(err, limitPath)
	}
	return nil
}
