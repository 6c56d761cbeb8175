package server

import (
	"fmt"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
)

// ReadinessService is the health-check service name that readiness probes
// ask for: NOT_SERVING while the server cannot admit calls (a fail_closed
// state store is unreachable) or is shutting down. The empty name, for
// liveness probes, stays SERVING until shutdown: restarting a replica does
// not bring Redis back.
var ReadinessService = llmrelayv1.LLMService_ServiceDesc.ServiceName

// openStore opens the configured state store.
func (s *Server) openStore() (state.Store, error) {
	c := s.cfg.State
	switch c.Store {
	case state.StoreRedis:
		st, err := redisstore.New(c.Redis, redisstore.Options{
			FailClosed: c.OnStoreFailure == state.FailClosed,
			Logger:     s.log,
			Metrics:    s.metrics,
		})
		if err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		return st, nil
	case state.StoreMemory, "":
		return memory.New(), nil
	}
	return nil, fmt.Errorf("state.store: %q is not %s or %s", c.Store, state.StoreMemory, state.StoreRedis)
}

// followStore makes readiness follow the store's condition, for stores
// that can fail; it returns the function that stops following.
func (s *Server) followStore() (stop func()) {
	w, ok := s.store.(state.Watcher)
	if !ok {
		return func() {}
	}
	return w.Watch(func(c state.Condition) {
		status := healthpb.HealthCheckResponse_SERVING
		if !c.Admitting {
			status = healthpb.HealthCheckResponse_NOT_SERVING
		}
		// Ignored after Shutdown, which has set everything NOT_SERVING.
		s.health.SetServingStatus(ReadinessService, status)
	})
}

// retryBudgets gives runtime rt its providers' retry budgets (none when
// retry.budget is off): the state store's when it has them (the redis
// store: one budget per provider for every replica; what is in flight is
// the store's, so it outlives a reload), else this process's own, which go
// on counting the calls in flight on prev, the runtime rt replaces.
func (s *Server) retryBudgets(rt *runtime, prev *runtime) {
	limit, on := rt.cfg.Retry.BudgetConfig()
	if !on {
		return
	}
	if shared, ok := s.store.(state.RetryBudgets); ok {
		byName := make(map[string]retry.Throttle, len(rt.cfg.Providers))
		for _, p := range rt.cfg.Providers {
			byName[p.Name] = shared.RetryBudget(p.Name, limit)
		}
		for _, m := range rt.cfg.Tools.MCPServers {
			name := toolBudgetName(m.Name)
			byName[name] = shared.RetryBudget(name, limit)
		}
		rt.budget = func(name string) retry.Throttle { return byName[name] }
		return
	}
	rt.budgets = retry.NewBudgets(limit)
	if prev != nil {
		// Calls in flight on the previous config keep counting.
		rt.budgets.Inherit(prev.budgets)
	}
	rt.budget = rt.budgets.Throttle
}
