package operator

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/zkraft/zkraft/session"
)

// fourLetterWords are the commands ZooKeeper answers on its client port.
var fourLetterWords = map[string]bool{
	"ruok": true, "srvr": true, "stat": true, "mntr": true, "conf": true, "cons": true,
	"crst": true, "srst": true, "envi": true, "dirs": true, "dump": true, "wchs": true,
	"wchc": true, "wchp": true, "isro": true, "gtmk": true, "stmk": true, "hash": true,
}

// Words lists, sorted, the four-letter words this server answers, for
// checking a 4lw.commands.whitelist.
func Words() []string {
	out := make([]string, 0, len(fourLetterWords))
	for w := range fourLetterWords {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// FourLetter answers the four-letter words: it is the
// session.FourLetterHandler a server's Config takes. The words enabled are
// the server's Config.FourLetterWhitelist.
type FourLetter struct{}

var _ session.FourLetterHandler = FourLetter{}

// IsFourLetterWord implements session.FourLetterHandler.
func (FourLetter) IsFourLetterWord(cmd string) bool { return fourLetterWords[cmd] }

// AnswerFourLetterWord implements session.FourLetterHandler: the answer
// to cmd, a word for which IsFourLetterWord is true.
func (FourLetter) AnswerFourLetterWord(srv *session.Server, cmd string) []byte {
	s := newView(srv)
	if !s.fourLetterAllowed(cmd) {
		return []byte(cmd + " is not executed because it is not in the whitelist.\n")
	}
	if needsServing[cmd] && !s.serving() {
		return []byte(notServing)
	}
	if heavyWords[cmd] {
		done, err := takeReportTurn(context.Background(), srv)
		if err != nil {
			return []byte(err.Error() + "\n")
		}
		defer done()
	}
	var b strings.Builder
	s.answer(&b, cmd)
	return []byte(b.String())
}

// notServing is ZooKeeper's answer to most four-letter words while its
// server is not running: a member of an ensemble without a quorum (and not
// serving read-only clients), e.g. between leaders or cut off from the
// majority. Health checks that look for "Mode:" in srvr rely on it.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// needsServing are the words ZooKeeper 3.8 answers with notServing then
// (its ruok, envi and isro still answer; isro says "null").
var needsServing = map[string]bool{
	"srvr": true, "stat": true, "mntr": true, "conf": true, "cons": true, "crst": true,
	"srst": true, "dump": true, "dirs": true, "wchs": true, "wchc": true, "wchp": true, "hash": true,
}

func (s view) fourLetterAllowed(cmd string) bool {
	for _, w := range s.cfg.FourLetterWhitelist {
		if w == "*" || w == cmd {
			return true
		}
	}
	return false
}

// answer writes the answer to an allowed word.
func (s view) answer(b *strings.Builder, cmd string) {
	switch cmd {
	case "ruok":
		b.WriteString("imok")
	case "isro":
		switch {
		case !s.serving():
			b.WriteString("null")
		case s.node.HasQuorum():
			b.WriteString("rw")
		default:
			b.WriteString("ro")
		}
	case "srvr", "stat":
		s.writeStat(b, cmd == "stat")
	case "mntr":
		s.writeMntr(b)
	case "conf":
		s.writeConf(b)
	case "envi":
		s.writeEnvi(b)
	case "cons":
		s.writeConns(b, false)
		b.WriteString("\n")
	case "srst":
		s.resetStats()
		b.WriteString("Server stats reset.\n")
	case "crst":
		s.srv.ResetConnectionStats()
		b.WriteString("Connection stats reset.\n")
	case "wchs":
		watchers, paths, total := s.node.Watches().Stats()
		fmt.Fprintf(b, "%d connections watching %d paths\nTotal watches:%d\n", watchers, paths, total)
	case "wchc":
		s.writeWatchesBySession(b)
		b.WriteString("\n") // ZooKeeper's WatchCommand ends with a println
	case "wchp":
		s.writeWatchesByPath(b)
		b.WriteString("\n")
	case "dump":
		s.writeDump(b)
	case "dirs":
		fmt.Fprintf(b, "datadir_size: %d\nlogdir_size: %d\n", dirSize(s.cfg.Env["dataDir"]), dirSize(s.logDir()))
	default: // gtmk, stmk, hash: JVM-specific tracing and digests
		fmt.Fprintf(b, "%s is not supported by this server.\n", cmd)
	}
}
