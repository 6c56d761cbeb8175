package redisstore_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// TestStreamCapHoldsAcrossAnEmptyRestart (issue 24): three replicas keep
// a key at its stream cap of 4 under load while redis-server restarts
// empty: the streams open at once never pass 4, although Redis forgot
// every lease. Each replica re-registers its open leases when it meets the
// restarted server, and capped admissions wait until every replica could
// have (the store's restart gate).
func TestStreamCapHoldsAcrossAnEmptyRestart(t *testing.T) {
	const cap, replicas, workers = 4, 3, 4
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.ReadTimeout, cfg.WriteTimeout = time.Second, time.Second
	var stores []*redisstore.Store
	for range replicas {
		s := open(t, cfg, redisstore.Options{FailClosed: true})
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	var open, most, admitted atomic.Int64
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for _, s := range stores {
		for range workers {
			wg.Go(func() {
				for ctx.Err() == nil {
					adm, err := s.Admit(ctx, "k", state.Quota{MaxConcurrent: cap})
					if err != nil || !adm.Allowed {
						time.Sleep(time.Millisecond)
						continue
					}
					n := open.Add(1)
					admitted.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					time.Sleep(time.Duration(200+rand.IntN(1000)) * time.Millisecond) // across the restart
					open.Add(-1)
					adm.Lease.Release()
				}
			})
		}
	}
	waitAdmitted := func(n int64) {
		t.Helper()
		for want := admitted.Load() + n; admitted.Load() < want; {
			if t.Context().Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitAdmitted(10) // under load, at the cap
	srv.Restart(t)
	waitAdmitted(20) // and again after the restart
	stop()
	wg.Wait()
	if m := most.Load(); m > cap {
		t.Fatalf("%d streams open at once across the restart, over the cap of %d", m, cap)
	}
}
