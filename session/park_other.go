//go:build !linux

package session

// parker is only implemented on Linux; elsewhere idle connections wait in
// their reader goroutines.
type parker struct{}

func newParker() *parker               { return nil }
func (p *parker) park(int, *conn) bool { return false }
func (p *parker) unpark(*conn)         {}
func (p *parker) stop()                {}
