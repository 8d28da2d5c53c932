package server

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/operator"
)

// parseMemberLine is ensemble.ParseServerLine with ZooKeeper's format
// check (QuorumPeer.QuorumServer): host:quorumPort:electionPort[:role]
// [;clientAddr]. The election port is not optional there, so a line
// without one is refused here too, instead of starting a member whose
// configuration no ZooKeeper would read.
func parseMemberLine(key, value string) (backend.Peer, error) {
	addr, _, _ := strings.Cut(value, ";")
	addr = strings.TrimSpace(addr)
	if i := strings.LastIndex(addr, "]"); i >= 0 {
		addr = addr[i+1:] // an IPv6 host in brackets
	}
	if n := strings.Count(addr, ":"); n < 2 || n > 3 {
		return backend.Peer{}, fmt.Errorf("%s=%s does not have the form host:quorumPort:electionPort[:role][;clientAddr]", key, value)
	}
	return backend.ParseServerLine(key, value)
}

// CheckSuperDigest refuses a super user that is not a digest identity:
// "user:" and base64 of a SHA-1 (what DigestAuthenticationProvider's
// generateDigest makes of "user:password", and `zkraft digest` prints).
// ZooKeeper takes any string and compares it with the digests clients
// prove, so a password written there by mistake silently lets no one in.
func CheckSuperDigest(v string) error {
	user, hash, ok := strings.Cut(v, ":")
	sum, err := base64.StdEncoding.DecodeString(hash)
	if !ok || user == "" || err != nil || len(sum) != 20 {
		return errors.New("superDigest is not user:base64(sha1(user:password)); `zkraft digest user:password` prints it")
	}
	return nil
}

// checkFourLetterWords refuses a whitelist naming a word this server does
// not know: a typo would otherwise leave a health check unanswered.
func checkFourLetterWords(words []string) error {
	known := operator.Words()
	for _, w := range words {
		if w != "*" && !slices.Contains(known, w) {
			return fmt.Errorf("unknown four-letter word %q (known: %s, or *)", w, strings.Join(known, ","))
		}
	}
	return nil
}

// warnUnknownKey logs a zoo.cfg key this server does not know, with the
// known key nearest to it when it looks like a typo of one.
func warnUnknownKey(log *zap.Logger, key string) {
	if near := nearestKey(key); near != "" {
		log.Warn("ignoring unsupported zoo.cfg key", zap.String("key", key), zap.String("didYouMean", near))
		return
	}
	log.Warn("ignoring unsupported zoo.cfg key", zap.String("key", key))
}

// nearestKey is the known key within a few edits of key (ignoring case),
// or "".
func nearestKey(key string) string {
	best, bestDist := "", min(3, len(key)/3)+1
	for _, k := range settingKeys() {
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
