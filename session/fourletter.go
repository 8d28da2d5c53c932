package session

// FourLetterHandler answers the four-letter words ZooKeeper answers on its
// client port (ruok, srvr, mntr, ...; package operator's FourLetter). A
// connection whose first four bytes are one is answered and closed. Its
// methods run on the connection's goroutine, never on the request path of
// a session.
type FourLetterHandler interface {
	// IsFourLetterWord reports whether a connection's first four bytes
	// are a word it answers.
	IsFourLetterWord(cmd string) bool
	// AnswerFourLetterWord returns the answer to cmd, asked of srv.
	AnswerFourLetterWord(srv *Server, cmd string) []byte
}

// fourLetter answers a four-letter word and closes the connection. The
// word counts as a packet received (before the answer: srst then reports
// none).
func (c *conn) fourLetter(h FourLetterHandler, cmd string) {
	defer c.out.closeAfterFlush()
	c.srv.stats.packetsReceived.Add(1)
	c.stats.received.Add(1)
	c.out.raw(h.AnswerFourLetterWord(c.srv, cmd))
}

// lowerLetters reports whether b is all lower-case ASCII letters, as every
// four-letter word is; a ConnectRequest's length never is (it would be
// over 1.6 GB), so a handshake costs no string for the check.
func lowerLetters(b []byte) bool {
	for _, c := range b {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
