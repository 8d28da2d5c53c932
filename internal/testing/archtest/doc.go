// Package archtest holds the repository's architecture as a test: which
// folder may import which (docs/DESIGN.md draws the same picture). It has
// no code of its own.
package archtest
