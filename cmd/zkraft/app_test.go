package main

import (
	"bytes"

	"github.com/urfave/cli/v2"
)

// runApp runs the zkraft command line in process and returns its output.
func runApp(args ...string) (string, error) {
	var out bytes.Buffer
	app := &cli.App{Name: "zkraft", Commands: commands(), Writer: &out, ErrWriter: &out}
	err := app.Run(append([]string{"zkraft"}, args...))
	return out.String(), err
}
