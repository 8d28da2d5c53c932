package operator

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonObj is a JSON object whose fields keep the order they were added in,
// as the LinkedHashMaps behind ZooKeeper's AdminServer responses do.
type jsonObj []jsonField

// jsonField is one member of a jsonObj.
type jsonField struct {
	key string
	val any
}

// add appends a field and returns the object, for chaining.
func (o jsonObj) add(key string, val any) jsonObj { return append(o, jsonField{key, val}) }

// jsonNumber is a number already formatted (a Java double's text).
type jsonNumber string

// writeJackson renders v as ZooKeeper's AdminServer does with Jackson's
// default pretty printer: objects one field per line, indented two spaces
// per level and written `"key" : value`; arrays on one line as
// `[ a, b ]`; empty ones as `{ }` and `[ ]`; no trailing newline.
// Supported values: nil, bool, string, the integer types, jsonNumber,
// jsonObj, []any, []string and []int64.
func writeJackson(b *strings.Builder, v any) { writeJSONValue(b, v, 0) }

// writeJSONValue writes v at object nesting level (the indentation of the
// object's fields is level+1 steps).
func writeJSONValue(b *strings.Builder, v any, level int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeJSONString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint8:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case jsonNumber:
		b.WriteString(string(x))
	case jsonObj:
		if len(x) == 0 {
			b.WriteString("{ }")
			return
		}
		b.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
			indent(b, level+1)
			writeJSONString(b, f.key)
			b.WriteString(" : ")
			writeJSONValue(b, f.val, level+1)
		}
		b.WriteByte('\n')
		indent(b, level)
		b.WriteByte('}')
	case []any:
		writeJSONArray(b, len(x), func(i int) { writeJSONValue(b, x[i], level) })
	case []string:
		writeJSONArray(b, len(x), func(i int) { writeJSONString(b, x[i]) })
	case []int64:
		writeJSONArray(b, len(x), func(i int) { b.WriteString(strconv.FormatInt(x[i], 10)) })
	default: // a programming error, never client input: show it, do not fail
		writeJSONString(b, "unsupported value")
	}
}

func writeJSONArray(b *strings.Builder, n int, elem func(int)) {
	if n == 0 {
		b.WriteString("[ ]")
		return
	}
	b.WriteString("[ ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		elem(i)
	}
	b.WriteString(" ]")
}

func indent(b *strings.Builder, level int) {
	for range level {
		b.WriteString("  ")
	}
}

// writeJSONString quotes s as Jackson does: `"` and `\` escaped, control
// characters as \n, \t, \r, \b, \f or \u00XX, everything else (including
// non-ASCII) as is. Invalid UTF-8 becomes U+FFFD.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}
