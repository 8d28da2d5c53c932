package operator

import "strings"

// redacted replaces a secret's value in what the AdminServer shows.
const redacted = "********"

// redactConfig returns zoo.cfg text with the values of its secrets
// replaced: superDigest (whose digest can be attacked offline) and every
// password (ssl.keyStore.password, ssl.quorum.trustStore.password, ...).
// ZooKeeper's initial_configuration shows the file as it is; anyone who
// can reach the AdminServer would read them.
func redactConfig(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		// zoo.cfg separates a key from its value by '=' or ':'
		// (internal/zookeeper/javaprops, Java's properties); the value is hidden
		// after the first of them that ends a secret's key, which also
		// finds the key in a commented-out line ("# old: x.password=...").
		sep := -1
		for j := 0; j < len(line) && sep < 0; j++ {
			if (line[j] == '=' || line[j] == ':') && isSecretKey(strings.TrimSpace(line[:j])) {
				sep = j
			}
		}
		if sep < 0 {
			continue
		}
		end := ""
		if strings.HasSuffix(line, "\n") {
			end = "\n"
		}
		lines[i] = line[:sep+1] + redacted + end
	}
	return strings.Join(lines, "")
}

// isSecretKey reports the zoo.cfg keys whose values are secrets.
func isSecretKey(key string) bool {
	k := strings.ToLower(key) // commented-out lines too: still secrets
	return strings.Contains(k, "password") || strings.Contains(k, "passwd") ||
		strings.HasSuffix(k, "superdigest") || strings.Contains(k, "secret")
}
