package shell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/peterh/liner"
)

// defaultHistoryFile is where interactive history persists across runs.
const defaultHistoryFile = ".zkraft_history"

// historyPath resolves the history file: the explicit one, else
// ~/.zkraft_history.
func historyPath(explicit string) string {
	if explicit != "" {
		return explicit
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, defaultHistoryFile)
}

// interactive is the line-editing loop (github.com/peterh/liner): prompt,
// persistent history, tab completion of commands and znode paths.
func (s *Shell) interactive(historyFile string) error {
	ln := liner.NewLiner()
	defer ln.Close()
	s.inInteractive.Store(true)
	defer s.inInteractive.Store(false)
	ln.SetCtrlCAborts(true)
	ln.SetTabCompletionStyle(liner.TabPrints)
	ln.SetWordCompleter(s.complete)
	hist := historyPath(historyFile)
	if hist != "" {
		if f, err := os.Open(hist); err == nil {
			_, _ = ln.ReadHistory(f)
			f.Close()
		}
	}
	save := func() {
		if hist == "" {
			return
		}
		f, err := os.OpenFile(hist, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return
		}
		_, _ = ln.WriteHistory(f)
		f.Close()
	}
	for {
		s.idleSess.Store(s.sess)
		s.idleCount.Store(int64(s.commandCount))
		s.atPrompt.Store(true)
		line, err := ln.Prompt(s.Prompt())
		s.atPrompt.Store(false)
		if errors.Is(err, liner.ErrPromptAborted) {
			continue
		}
		if errors.Is(err, io.EOF) {
			s.printf("\n")
			return nil
		}
		if err != nil {
			return fmt.Errorf("read line: %w", err)
		}
		if strings.TrimSpace(line) != "" {
			ln.AppendHistory(line)
			save()
		}
		if errors.Is(s.ExecuteLine(line), errQuit) {
			return nil
		}
	}
}

// complete is the tab completer: the first word completes against command
// names, a word starting with "/" against the children of its parent znode
// (asked from the server), as zkCli's JLineZNodeCompleter.
func (s *Shell) complete(line string, pos int) (head string, completions []string, tail string) {
	head, tail = line[:pos], line[pos:]
	start := strings.LastIndexAny(head, " \t") + 1
	word := head[start:]
	head = head[:start]
	if strings.TrimSpace(head) == "" {
		for name := range s.commands {
			if strings.HasPrefix(name, word) {
				completions = append(completions, name+" ")
			}
		}
		sort.Strings(completions)
		return head, completions, tail
	}
	if !strings.HasPrefix(word, "/") || s.sess == nil || !s.sess.alive() {
		return head, nil, tail
	}
	dir, prefix := word[:strings.LastIndex(word, "/")], word[strings.LastIndex(word, "/")+1:]
	parent := dir
	if parent == "" {
		parent = "/"
	}
	children, _, err := s.zk().Children(parent)
	if err != nil {
		return head, nil, tail
	}
	sort.Strings(children)
	for _, c := range children {
		if strings.HasPrefix(c, prefix) {
			completions = append(completions, dir+"/"+c)
		}
	}
	return head, completions, tail
}
