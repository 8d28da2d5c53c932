package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	settingsBegin = "<!-- settings:begin: generated from server/settingsdata.go; ZKRAFT_UPDATE_DOCS=1 go test -run TestSettingsReference ./server/ rewrites it -->"
	settingsEnd   = "<!-- settings:end -->"
)

// settingsReference renders serverSettings as the configuration
// reference of docs/operations.md: one table per topic.
func settingsReference() string {
	var b strings.Builder
	b.WriteString(settingsBegin + "\n")
	for _, topic := range settingTopics {
		fmt.Fprintf(&b, "\n#### %s\n\n| flag | zoo.cfg | default | what it does |\n|---|---|---|---|\n", topic)
		for i := range serverSettings {
			st := &serverSettings[i]
			if st.Topic != topic {
				continue
			}
			flag := ""
			if st.Flag != "" {
				flag = "`--" + st.Flag + "`"
			}
			var keys []string
			for _, k := range st.Keys {
				keys = append(keys, "`"+k+"`")
			}
			for _, p := range st.Props {
				if !contains(st.Keys, p) {
					keys = append(keys, "`zookeeper."+p+"`")
				}
			}
			zoo := strings.Join(keys, ", ")
			if len(st.Props) > 0 && zoo != "" {
				zoo += " (also as `zookeeper.` system properties)"
			}
			def := st.Default
			switch {
			case def != "":
			case st.Value != "":
				def = "`" + st.Value + "`"
			case st.Kind == FlagBool:
				def = "off"
			default:
				def = "none"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", flag, zoo, cell(def), cell(st.Help))
		}
	}
	b.WriteString("\n" + settingsEnd)
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cell escapes a table cell's pipes.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// TestSettingsReference: docs/operations.md's configuration reference is
// serverSettings rendered, so the flags, zoo.cfg keys, defaults and help an
// operator reads are the ones the server takes. ZKRAFT_UPDATE_DOCS=1
// rewrites it.
func TestSettingsReference(t *testing.T) {
	path := filepath.Join("..", "docs", "operations.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, settingsBegin), strings.Index(doc, settingsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated Config reference (%q ... %q)", path, settingsBegin, settingsEnd)
	}
	want := settingsReference()
	got := doc[i : j+len(settingsEnd)]
	if got == want {
		return
	}
	if os.Getenv("ZKRAFT_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(doc[:i]+want+doc[j+len(settingsEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s's Config reference is not serverSettings': run ZKRAFT_UPDATE_DOCS=1 go test -run TestSettingsReference ./cmd/zkraft/", path)
}
