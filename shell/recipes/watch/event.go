package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// Event types, ZooKeeper's names for the notifications they stand for.
const (
	NodeCreated         = "NodeCreated"
	NodeDataChanged     = "NodeDataChanged"
	NodeDeleted         = "NodeDeleted"
	NodeChildrenChanged = "NodeChildrenChanged"
)

// Event is one change of a followed node.
type Event struct {
	Type string
	Path string
	// Zxid is the change's transaction, as the notification carries it.
	// For a change found after a reconnect: the node's czxid when
	// created, its mzxid when its data changed, its pzxid when its
	// children changed, and the pzxid of its parent (the nearest one
	// still there) when deleted.
	Zxid int64
	// Data is the node's data after a creation or data change, when
	// HasData: it was read as of that change (-o json only).
	Data    []byte
	HasData bool
	// Away marks a change made while the watcher was disconnected, found
	// by comparing the tree after the reconnect.
	Away bool
}

// sortEvents orders a batch by zxid, keeping the batch's order for ties
// (a deletion found with a re-creation comes first).
func sortEvents(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Zxid < evs[j].Zxid })
}

// jsonEvent is an event as -o json prints it.
type jsonEvent struct {
	Type string  `json:"type"`
	Path string  `json:"path"`
	Zxid string  `json:"zxid"`
	Data *string `json:"data,omitempty"`
	Away bool    `json:"away,omitempty"`
}

// Print writes ev as one line: "TYPE PATH ZXID", with " (while away)"
// for a change found after a reconnect, or as one JSON document.
func Print(w io.Writer, ev Event, asJSON bool) error {
	if asJSON {
		je := jsonEvent{Type: ev.Type, Path: ev.Path, Zxid: zkjson.Hex(ev.Zxid), Away: ev.Away}
		if ev.HasData {
			s := string(ev.Data)
			je.Data = &s
		}
		b, err := json.Marshal(je)
		if err != nil {
			return fmt.Errorf("event as JSON: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	away := ""
	if ev.Away {
		away = " (while away)"
	}
	_, err := fmt.Fprintf(w, "%s %s %s%s\n", ev.Type, ev.Path, zkjson.Hex(ev.Zxid), away)
	return err
}
