package console

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// A node's data travels to the page as base64 (JSON's []byte), so no byte
// is lost on the way; the page asks for a bounded slice of a large node
// (api/node?max=N, and offset=N for the next slice) and learns the whole
// size and whether it is all valid UTF-8, so it offers text editing only
// for data a text box holds exactly. Writes take the data as base64
// (dataBase64) for the same reason; a plain data string, as before, is
// written as its UTF-8 bytes.

// errBothData refuses a write that names its data twice.
var errBothData = errors.New("give data or dataBase64, not both")

// requestData is the bytes a create or set writes: dataBase64 decoded
// when given, else data's UTF-8 bytes.
func requestData(text string, b64 *string) ([]byte, error) {
	if b64 == nil {
		return []byte(text), nil
	}
	if text != "" {
		return nil, errBothData
	}
	data, err := base64.StdEncoding.DecodeString(*b64)
	if err != nil {
		return nil, fmt.Errorf("dataBase64: %w", err)
	}
	return data, nil
}

// sliceData fills out's data fields from a node's whole data: the part
// from the request's offset, at most its max bytes (all when max is
// absent), with the whole size and whether it is valid UTF-8.
func sliceData(out *nodeJSON, r *http.Request, data []byte) {
	out.Size, out.UTF8 = len(data), utf8.Valid(data)
	offset := min(intParam(r, "offset", 0), len(data))
	end := len(data)
	if limit := intParam(r, "max", -1); limit >= 0 {
		// Not min(offset+limit, ...): a max near MaxInt overflows the sum
		// to a negative end, and the slice below panics.
		end = offset + min(limit, len(data)-offset)
	}
	out.Data, out.Offset = data[offset:end], offset
	out.Partial = offset > 0 || end < len(data)
}
