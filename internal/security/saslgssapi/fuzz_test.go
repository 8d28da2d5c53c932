package saslgssapi

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"
)

// FuzzNext feeds arbitrary leader tokens to the client after its AP-REQ:
// as the AP-REP, as the wrapped security-layer offer, and both in turn.
// Nothing panics, and no token made without the session key completes the
// exchange (it would have to verify under that key).
func FuzzNext(f *testing.F) {
	f.Add([]byte{0x6f, 0x03, 0x02, 0x01, 0x00}, []byte{0x05, 0x04, 0x00, 0xff, 0x00, 0x0c, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0})
	f.Add([]byte{0x60, 0x80, 0x06, 0x09}, []byte{0x05, 0x04, 0x05, 0xff, 0x00, 0x0c, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{0x05, 0x04}, []byte{})
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{7}, 32)}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		c := NewClient(nil, "zkquorum", "localhost", "learner")
		c.step, c.session, c.key = 1, key, key
		if _, err := c.Next(first); err != nil {
			return
		}
		if _, err := c.Next(second); err == nil && c.Complete() {
			t.Fatalf("completed on tokens %x, %x made without the session key", first, second)
		}
	})
}
