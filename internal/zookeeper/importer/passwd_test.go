package importer

import (
	"encoding/hex"
	"testing"
)

// TestPasswdIsZooKeepers checks Passwd against a password Apache ZooKeeper
// 3.8 handed out (session 0x10001a01b360001, read back by kazoo).
func TestPasswdIsZooKeepers(t *testing.T) {
	got := hex.EncodeToString(Passwd(0x10001a01b360001))
	if want := "5bed5863d527ba4e5b6f4b9eda5cc9af"; got != want {
		t.Fatalf("Passwd = %s, want %s", got, want)
	}
}
