// Package jute owns ZooKeeper's wire format: the Jute primitive encoding, every
// record of the client protocol (zookeeper.jute), the opcode, error, event and
// flag tables, and length-prefixed framing.
//
// Encoding is explicit and allocation-conscious: a Writer appends to a byte
// slice, a Reader walks a byte slice with bounds checks and a sticky error.
// Nothing here uses reflection and nothing panics on malformed input: a
// truncated or garbage buffer yields an error wrapping ErrMalformed.
package jute
