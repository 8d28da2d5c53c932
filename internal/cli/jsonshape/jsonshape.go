// Package jsonshape describes a JSON document's structure, for tests that
// compare two servers' responses whose values differ (session ids, times,
// counters) but whose fields, field order and types must not.
package jsonshape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Of returns the shape of one JSON value: objects as {name:shape,...} in
// document order, arrays as [shape of the first element], scalars as
// number, string, bool or null. An object whose first key is data (all
// digits, such as a session id, or a path starting with "/") collapses to
// {*:shape} with the first of its values that is not an empty array, so
// maps keyed by sessions or paths compare equal across servers.
func Of(doc []byte) (string, error) { return of(doc, false) }

// OfTopOrdered is Of with the fields of nested objects sorted by name: only
// the top level's order counts. ZooKeeper's AdminServer writes its
// responses from ordered maps but serializes nested Java beans (the
// server_stats object, zabstate's addresses) in reflection order, which
// differs between JVM runs.
func OfTopOrdered(doc []byte) (string, error) { return of(doc, true) }

func of(doc []byte, sortNested bool) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	d := &decoder{dec: dec, sortNested: sortNested}
	s, err := d.value(0)
	if err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("jsonshape: data after the value: %v", err)
	}
	return s, nil
}

// decoder walks one document.
type decoder struct {
	dec        *json.Decoder
	sortNested bool
}

func (d *decoder) value(depth int) (string, error) {
	dec := d.dec
	tok, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("jsonshape: %w", err)
	}
	switch x := tok.(type) {
	case json.Delim:
		if x == '{' {
			return d.object(depth)
		}
		return d.array(depth)
	case json.Number:
		return "number", nil
	case string:
		return "string", nil
	case bool:
		return "bool", nil
	default:
		return "null", nil
	}
}

func (d *decoder) object(depth int) (string, error) {
	dec := d.dec
	var keys, shapes []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("jsonshape: %w", err)
		}
		s, err := d.value(depth + 1)
		if err != nil {
			return "", err
		}
		keys, shapes = append(keys, k.(string)), append(shapes, s)
	}
	if _, err := dec.Token(); err != nil {
		return "", fmt.Errorf("jsonshape: %w", err)
	}
	if len(keys) > 0 && isDataKey(keys[0]) {
		first := shapes[0]
		for _, s := range shapes {
			if s != "[]" {
				first = s
				break
			}
		}
		return "{*:" + first + "}", nil
	}
	parts := make([]string, len(keys))
	for i := range keys {
		parts[i] = keys[i] + ":" + shapes[i]
	}
	if d.sortNested && depth > 0 {
		sort.Strings(parts)
	}
	return "{" + strings.Join(parts, ",") + "}", nil
}

func (d *decoder) array(depth int) (string, error) {
	dec := d.dec
	first := ""
	for dec.More() {
		s, err := d.value(depth + 1)
		if err != nil {
			return "", err
		}
		if first == "" {
			first = s
		}
	}
	if _, err := dec.Token(); err != nil {
		return "", fmt.Errorf("jsonshape: %w", err)
	}
	return "[" + first + "]", nil
}

func isDataKey(k string) bool {
	return strings.HasPrefix(k, "/") || (k != "" && strings.Trim(k, "0123456789") == "")
}
