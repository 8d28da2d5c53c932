package main

import (
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger builds the server's zap logger: level debug|info|warn|error,
// format console|json.
func newLogger(level, format string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	var cfg zap.Config
	switch format {
	case "json":
		cfg = zap.NewProductionConfig()
	case "console", "":
		cfg = zap.NewDevelopmentConfig()
		cfg.DisableStacktrace = true
		cfg.Development = false
	default:
		return nil, fmt.Errorf("log format %q: want console or json", format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.Sampling = nil
	l, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("build logger: %w", err)
	}
	return l, nil
}
