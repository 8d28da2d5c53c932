// Command holder keeps a soak-test member's network namespace alive. It is
// the process of the "pod" container whose network each zkraft member's
// container joins (docker run --network container:<holder>), so a member
// can be killed and restarted without losing its address, its published
// client port or the partition rules the test set in that namespace. It
// does nothing but wait for SIGTERM or SIGINT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
