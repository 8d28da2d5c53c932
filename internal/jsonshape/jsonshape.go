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
	"strings"
)

// Of returns the shape of one JSON value: objects as {name:shape,...} in
// document order, arrays as [shape of the first element], scalars as
// number, string, bool or null. An object whose first key is data (all
// digits, such as a session id, or a path starting with "/") collapses to
// {*:shape} with the first of its values that is not an empty array, so
// maps keyed by sessions or paths compare equal across servers.
func Of(doc []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	s, err := value(dec)
	if err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("jsonshape: data after the value: %v", err)
	}
	return s, nil
}

func value(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("jsonshape: %w", err)
	}
	switch x := tok.(type) {
	case json.Delim:
		if x == '{' {
			return object(dec)
		}
		return array(dec)
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

func object(dec *json.Decoder) (string, error) {
	var keys, shapes []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("jsonshape: %w", err)
		}
		s, err := value(dec)
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
	return "{" + strings.Join(parts, ",") + "}", nil
}

func array(dec *json.Decoder) (string, error) {
	first := ""
	for dec.More() {
		s, err := value(dec)
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
