package console

import (
	"fmt"
	"net/http"
)

// maxData is the most data the console sends for one znode: ZooKeeper's
// jute.maxbuffer default (1 MiB less one byte). More would be refused by
// the server or, past go-zookeeper's 1.5 MiB request buffer, fail in the
// client; the console refuses it first.
const maxData = 0xfffff

// dataTooLarge answers 413 (and returns true) when data is over maxData.
func dataTooLarge(w http.ResponseWriter, data string) bool {
	if len(data) <= maxData {
		return false
	}
	writeJSON(w, http.StatusRequestEntityTooLarge, apiError{
		Error: fmt.Sprintf("%d bytes of data: a znode holds at most %d (jute.maxbuffer)", len(data), maxData),
		Code:  "TooLarge",
	})
	return true
}
