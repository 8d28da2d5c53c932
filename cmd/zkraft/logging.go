package main

import (
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger builds the server's zap logger: level debug|info|warn|error,
// format console|json.
func newLogger(level, format string) (*zap.Logger, error) {
	cfg, err := loggerConfig(level, format)
	if err != nil {
		return nil, err
	}
	l, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("build logger: %w", err)
	}
	return l, nil
}

// loggerConfig is newLogger's zap configuration. Durations are written
// with their unit in both formats ("tickTime": "2s"; zap's production
// config would write a bare 2, in seconds).
func loggerConfig(level, format string) (zap.Config, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return zap.Config{}, fmt.Errorf("log level: %w", err)
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
		return zap.Config{}, fmt.Errorf("log format %q: want console or json", format)
	}
	cfg.EncoderConfig.EncodeDuration = zapcore.StringDurationEncoder
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.Sampling = nil
	return cfg, nil
}
