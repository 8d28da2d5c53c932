package server

import (
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestAdminPortTakenIsNotFatal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	core, logs := observer.New(zap.WarnLevel)
	stop := startAdmin(ln.Addr().String(), time.Second, nil, nil, nil, zap.New(core))
	stop()
	if logs.Len() != 1 || !strings.Contains(logs.All()[0].Message, "AdminServer") {
		t.Fatalf("want one warning about the AdminServer, got %v", logs.All())
	}
}
