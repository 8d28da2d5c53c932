package main

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestLogDurationsKeepTheirUnit: a duration field reads "2s" in both log
// formats, never a bare number whose unit the reader must guess.
func TestLogDurationsKeepTheirUnit(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		cfg, err := loggerConfig("info", format)
		if err != nil {
			t.Fatal(err)
		}
		var enc zapcore.Encoder
		if format == "json" {
			enc = zapcore.NewJSONEncoder(cfg.EncoderConfig)
		} else {
			enc = zapcore.NewConsoleEncoder(cfg.EncoderConfig)
		}
		buf, err := enc.EncodeEntry(zapcore.Entry{Message: "starting"},
			[]zap.Field{zap.Duration("tickTime", 2*time.Second), zap.Duration("syncLimit", 1500*time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		line := buf.String()
		if !strings.Contains(line, `"tickTime": "2s"`) && !strings.Contains(line, `"tickTime":"2s"`) ||
			!strings.Contains(line, `1.5s"`) {
			t.Errorf("%s: %s", format, line)
		}
	}
}
