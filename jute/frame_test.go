package jute

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

func frameOf(n int32, payload []byte) []byte {
	var w Writer
	w.Int(n)
	w.Raw(payload)
	return w.Buf
}

func TestReadFrame(t *testing.T) {
	const limit = 100
	cases := []struct {
		name    string
		in      []byte
		want    []byte
		wantErr error
	}{
		{"empty frame", frameOf(0, nil), []byte{}, nil},
		{"small", frameOf(3, []byte("abc")), []byte("abc"), nil},
		{"at limit", frameOf(limit, make([]byte, limit)), make([]byte, limit), nil},
		{"over limit", frameOf(limit+1, make([]byte, limit+1)), nil, ErrFrameTooLarge},
		{"huge", frameOf(0x7fffffff, nil), nil, ErrFrameTooLarge},
		{"negative", frameOf(-1, nil), nil, ErrFrameTooLarge},
		{"short payload", frameOf(10, []byte("abc")), nil, io.ErrUnexpectedEOF},
		{"short header", []byte{0, 0}, nil, io.ErrUnexpectedEOF},
		{"eof", nil, nil, io.EOF},
	}
	for _, tc := range cases {
		got, err := ReadFrame(bytes.NewReader(tc.in), nil, limit)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: got %x, %v", tc.name, got, err)
		}
	}
}

// TestReadFrameOversizeNoAlloc: a frame over the limit is refused before
// any payload buffer is allocated.
func TestReadFrameOversizeNoAlloc(t *testing.T) {
	in := frameOf(DefaultMaxBuffer+1, make([]byte, 16))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := ReadFrame(bytes.NewReader(in), nil, DefaultMaxBuffer); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 100*1024 {
		t.Errorf("%d bytes allocated for 100 refused frames", d)
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 64)
	var in bytes.Buffer
	in.Write(frameOf(5, []byte("hello")))
	in.Write(frameOf(2, []byte("yo")))
	a, err := ReadFrame(&in, buf, 64)
	if err != nil || string(a) != "hello" || &a[:1][0] != &buf[:1][0] {
		t.Fatalf("first frame %q, %v (reused=%v)", a, err, &a[:1][0] == &buf[:1][0])
	}
	b, err := ReadFrame(&in, a, 64)
	if err != nil || string(b) != "yo" {
		t.Fatalf("second frame %q, %v", b, err)
	}
}

func TestBeginEndFrame(t *testing.T) {
	var w Writer
	w.Raw([]byte("xx")) // frames may be appended after other data
	at := BeginFrame(&w)
	(&ReplyHeader{Xid: 1, Zxid: 2}).Encode(&w)
	EndFrame(&w, at)
	p, err := ReadFrame(bytes.NewReader(w.Buf[2:]), nil, DefaultMaxBuffer)
	if err != nil || len(p) != ReplyHeaderSize {
		t.Fatalf("ReadFrame = %x, %v", p, err)
	}
}
