package testproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// gone waits up to 5 s for pid to be gone (or a zombie: dead, only not
// yet waited for by the parent it was given).
func gone(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st, err := procState(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || st == 'Z' {
			return true
		}
	}
	return false
}

// startShell starts a shell that starts a sleep in the background and
// prints its pid, and returns the shell and the sleep's pid.
func startShell(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	cmd := Command("sh", "-c", "sleep 300 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	return cmd, pid
}

// TestKillTakesTheGroup: Kill kills what the process started too, and the
// process leads a group of its own.
func TestKillTakesTheGroup(t *testing.T) {
	cmd, sleeper := startShell(t)
	if pgid, err := syscall.Getpgid(cmd.Process.Pid); err != nil || pgid != cmd.Process.Pid {
		t.Fatalf("the shell's process group is %d (%v), want its own, %d", pgid, err, cmd.Process.Pid)
	}
	Kill(cmd)
	_ = cmd.Wait()
	if !gone(sleeper) {
		t.Fatalf("the shell's child %d outlived Kill", sleeper)
	}
}

// TestCleanupKills: a process Start started is killed, with its group,
// when its test ends.
func TestCleanupKills(t *testing.T) {
	var sleeper int
	t.Run("starts", func(t *testing.T) {
		_, sleeper = startShell(t)
	})
	if !gone(sleeper) {
		t.Fatalf("the shell's child %d outlived its test", sleeper)
	}
}

// TestStartKeepsTheMarker: a process given an environment of its own
// still carries the run's marker, for the reaper.
func TestStartKeepsTheMarker(t *testing.T) {
	t.Setenv(RunEnv, "marker-of-this-test")
	cmd := Command("sh", "-c", "echo $"+RunEnv)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Wait()
	if strings.TrimSpace(line) != "marker-of-this-test" {
		t.Fatalf("the process saw %s=%q", RunEnv, line)
	}
}

// TestDiesWithTheTestBinary: a process started by a test binary that
// dies without running its cleanups (as on a -timeout panic) is killed
// by the kernel. The dying binary is this one, run again as a helper.
func TestDiesWithTheTestBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal")
	}
	if os.Getenv("TESTPROC_HELPER") == "1" {
		cmd := Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0) // no cleanup, no Wait: the kernel's parent-death signal is all
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestDiesWithTheTestBinary$")
	helper.Env = append(os.Environ(), "TESTPROC_HELPER=1")
	out, err := helper.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("helper printed %q", out)
	}
	if !gone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the helper's child %d outlived it", pid)
	}
}

// TestStopWaitsForEveryThread: Stop returns with every thread of a
// multi-threaded process stopped, and it runs on after SIGCONT.
func TestStopWaitsForEveryThread(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		testenv.Require(t, fmt.Errorf("python3, a multi-threaded process to stop: %w", err))
	}
	cmd := Command(python, "-c", "import threading\ndef spin():\n    while True: pass\n"+
		"for _ in range(4): threading.Thread(target=spin).start()\n")
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid)); len(tasks) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("python3 did not start its threads")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := Stop(cmd.Process.Pid, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := runningThreads(cmd.Process.Pid); err != nil || n != 0 {
		t.Fatalf("%d threads running after Stop (%v)", n, err)
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, _ := runningThreads(cmd.Process.Pid); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still stopped after SIGCONT")
		}
		time.Sleep(time.Millisecond)
	}
}
