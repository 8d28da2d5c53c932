package main

import (
	"net"
	"strings"
	"testing"
)

// TestConsoleSettings: zoo.cfg's console.enabled and console.readOnly
// turn the console on and writable; it is off and read-only by default;
// a console without an AdminServer, or writable without being on, is
// refused; a value other than true or false is an error.
func TestConsoleSettings(t *testing.T) {
	if d := defaultSettings(); d.ConsoleEnabled || d.ConsoleWritable {
		t.Fatalf("default console settings: %+v", d)
	}
	st, logs := mustApply(t, "dataDir=/d\nconsole.enabled=true\nconsole.readOnly=false\n")
	if !st.ConsoleEnabled || !st.ConsoleWritable || logs.Len() != 0 {
		t.Fatalf("console keys: enabled %v writable %v, warnings %v", st.ConsoleEnabled, st.ConsoleWritable, logs.All())
	}
	if err := st.checkConsole(); err != nil {
		t.Fatalf("console on the default AdminServer: %v", err)
	}
	st, _ = mustApply(t, "dataDir=/d\nconsole.enabled=true\n")
	if st.ConsoleWritable {
		t.Fatal("console.readOnly does not default to true")
	}
	if _, err := apply(t, "dataDir=/d\nconsole.enabled=yes\n"); err == nil || !strings.Contains(err.Error(), "console.enabled") {
		t.Fatalf("console.enabled=yes: %v", err)
	}
	st, _ = mustApply(t, "dataDir=/d\nconsole.enabled=true\nadmin.enableServer=false\n")
	if err := st.checkConsole(); err == nil || !strings.Contains(err.Error(), "--admin-addr") {
		t.Fatalf("console without an AdminServer: %v", err)
	}
	st = defaultSettings()
	st.ConsoleWritable = true
	if err := st.checkConsole(); err == nil {
		t.Fatal("a writable console that is off was accepted")
	}
}

// TestLoopbackAddr: the console reaches a client port bound on every
// interface over loopback, and a specific one as bound.
func TestLoopbackAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:2181": "127.0.0.1:2181", "[::]:2181": "[::1]:2181", "10.1.2.3:2181": "10.1.2.3:2181",
	} {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := loopbackAddr(a); got != want {
			t.Errorf("loopbackAddr(%s) = %s, want %s", in, got, want)
		}
	}
}
