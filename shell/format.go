package shell

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// javaDate renders milliseconds since the epoch as java.util.Date.toString
// does, in the local time zone: "Sat Nov 21 13:43:51 UTC 2026".
func javaDate(ms int64) string { return javaDateIn(ms, time.Local) }

// javaDateIn is javaDate in the time zone loc.
func javaDateIn(ms int64, loc *time.Location) string {
	return time.UnixMilli(ms).In(loc).Format("Mon Jan 02 15:04:05 MST 2006")
}

// statText is StatPrinter.print.
func statText(st *zk.Stat) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cZxid = %s\n", zkjson.Hex(st.Czxid))
	fmt.Fprintf(&b, "ctime = %s\n", javaDate(st.Ctime))
	fmt.Fprintf(&b, "mZxid = %s\n", zkjson.Hex(st.Mzxid))
	fmt.Fprintf(&b, "mtime = %s\n", javaDate(st.Mtime))
	fmt.Fprintf(&b, "pZxid = %s\n", zkjson.Hex(st.Pzxid))
	fmt.Fprintf(&b, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(&b, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(&b, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(&b, "ephemeralOwner = %s\n", zkjson.Hex(st.EphemeralOwner))
	fmt.Fprintf(&b, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(&b, "numChildren = %d\n", st.NumChildren)
	return b.String()
}

// plainData is zkCli's PlainOutputFormatter (new String(data, UTF_8), which
// turns invalid UTF-8 into U+FFFD). When safe is set (output to a terminal)
// control characters other than tab and newline are shown as \xNN so binary
// data cannot drive the terminal.
func plainData(data []byte, safe bool) string {
	var b strings.Builder
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case safe && (r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
		data = data[size:]
	}
	return b.String()
}

// hexDump is Netty's ByteBufUtil.prettyHexDump, which zkCli 3.9 uses for
// get -x.
func hexDump(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("         +-------------------------------------------------+\n")
	b.WriteString("         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n")
	b.WriteString("+--------+-------------------------------------------------+----------------+")
	for off := 0; off < len(data); off += 16 {
		end := min(off+16, len(data))
		row := data[off:end]
		fmt.Fprintf(&b, "\n|%08x|", off)
		for _, c := range row {
			fmt.Fprintf(&b, " %02x", c)
		}
		b.WriteString(strings.Repeat("   ", 16-len(row)))
		b.WriteString(" |")
		for _, c := range row {
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				b.WriteByte('.')
			}
		}
		b.WriteString(strings.Repeat(" ", 16-len(row)))
		b.WriteString("|")
	}
	b.WriteString("\n+--------+-------------------------------------------------+----------------+")
	return b.String()
}

// validatePath is PathUtils.validatePath; the error text is what zkCli
// prints for a malformed path.
func validatePath(path string, sequential bool) error {
	if sequential {
		path += "1"
	}
	if path == "" {
		return failf("Path length must be > 0")
	}
	if path[0] != '/' {
		return failf("Path must start with / character")
	}
	if len(path) == 1 {
		return nil
	}
	if path[len(path)-1] == '/' {
		return failf("Path must not end with / character")
	}
	chars := []rune(path)
	reason := ""
	last := '/'
	for i := 1; i < len(chars); last, i = chars[i], i+1 {
		c := chars[i]
		switch {
		case c == 0:
			reason = fmt.Sprintf("null character not allowed @%d", i)
		case c == '/' && last == '/':
			reason = fmt.Sprintf("empty node name specified @%d", i)
		case c == '.' && last == '.':
			if chars[i-2] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				reason = fmt.Sprintf("relative paths not allowed @%d", i)
			}
		case c == '.':
			if chars[i-1] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				reason = fmt.Sprintf("relative paths not allowed @%d", i)
			}
		case c > 0 && c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0 && c <= 0xffff:
			reason = fmt.Sprintf("invalid character @%d", i)
		}
		if reason != "" {
			return failf("Invalid path string \"%s\" caused by %s", path, reason)
		}
	}
	return nil
}

// joinPath appends child to parent as zkCli's tree walkers do.
func joinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}
