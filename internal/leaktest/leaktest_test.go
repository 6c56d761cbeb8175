package leaktest

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestFindWaitsForAGoroutineOnItsWay: a goroutine that ends well after
// goleak alone would have reported it is not a leak.
func TestFindWaitsForAGoroutineOnItsWay(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	release := make(chan struct{})
	go func() { <-release }()
	if err := goleak.Find(ignore); err == nil {
		t.Fatal("goleak alone did not see the waiting goroutine")
	}
	// It ends a while after Find begins to look (not a synchronisation:
	// Find waits however long this takes, up to Wait).
	go func() {
		time.Sleep(time.Second)
		close(release)
	}()
	if err := Find(ignore); err != nil {
		t.Fatalf("Find reported goroutines that ended: %v", err)
	}
}

// TestFindReportsALeak: a goroutine that never ends is reported.
func TestFindReportsALeak(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	stop := make(chan struct{})
	defer close(stop)
	go func() { <-stop }()
	if err := find(time.Second, ignore); err == nil {
		t.Fatal("a goroutine left running was not reported")
	}
}
