//go:build !unix

package session

// canPeek reports whether peekReady works here: elsewhere an idle
// connection keeps its read buffer.
const canPeek = false

func peekReady(uintptr, []byte) bool { return true }

// readNow is never called where canPeek is false.
func readNow(uintptr, []byte) (int, error) { return 0, errWouldBlock }
