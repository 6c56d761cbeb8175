package server

import (
	"context"
	"time"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	"github.com/llmrelay/llmrelay/internal/admin"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/apikeys"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

// localGovernance returns this process's store of keys and spending, made
// once, kept across reloads.
func (s *Server) localGovernance() *memory.Store {
	s.localGovOnce.Do(func() { s.localGov = memory.New(memory.WithClock(s.governanceClock)) })
	return s.localGov
}

// WithGovernanceClock sets the clock of budgets' windows, of keys' expiry
// and of how long a stored key is read from this replica's cache; tests
// pass one they move. The default is time.Now.
func WithGovernanceClock(now func() time.Time) Option {
	return func(s *Server) { s.governanceClock = now }
}

// WithKeyCheckInterval sets how often the keys of the open calls are
// read again, so that the calls of a key that stopped working end
// (engine.KeyCalls.Watch); tests shorten it. The default is
// engine.KeyCheckInterval.
func WithKeyCheckInterval(d time.Duration) Option {
	return func(s *Server) { s.keyCheck = d }
}

// keyStore returns the store of the keys made through the admin API: the
// state store (both of llmrelay's keep keys), or this process's.
func (s *Server) keyStore() state.KeyStore {
	if ks, ok := s.store.(state.KeyStore); ok {
		return ks
	}
	return s.localGovernance()
}

// apiKeys builds runtime rt's lookup of presented keys among the config's
// and the store's.
func (s *Server) apiKeys(rt *runtime) {
	rt.apiKeys = apikeys.NewKeys(rt.keys, s.keyStore(), s.governanceClock)
}

// governance builds runtime rt's budgets and admin API: authentication on
// rt's keys (apiKeys), the budgets on the store's counters, the admission
// step that reserves on them, and the admin API's service.
func (s *Server) governance(rt *runtime, authn *engine.Authenticator) *engine.Budget {
	cfg := rt.cfg
	spending, ok := s.store.(state.Spending)
	if !ok {
		spending = s.localGovernance()
	}
	if rt.keys.Len() > 0 {
		authn.Keys = rt.apiKeys
	}
	budgets := spend.New(spending, cfg.Teams, cfg.Pricing.Prices(), cfg.Governance, s.governanceClock)
	teams := make([]string, len(cfg.Teams))
	for i, t := range cfg.Teams {
		teams[i] = t.Name
	}
	rt.admin = admin.New(apikeys.NewAdmin(apikeys.AdminDeps{
		Store: s.keyStore(), Config: cfg.Auth.Keys, Teams: teams, Keys: rt.apiKeys,
		Now: s.governanceClock, Logger: s.log.With("component", "admin"), Metrics: s.metrics,
	}), budgets, s.governanceClock)
	return &engine.Budget{Budgets: budgets, Metrics: s.metrics}
}

// adminService is the admin API registered with gRPC (KeyService and
// UsageService). It serves nothing itself: each call is handed to the
// admin service of the call's runtime, which the runtime link put in its
// context. It embeds the Unsafe interfaces, so that an RPC added to the
// proto fails to compile here until it is dispatched too.
type adminService struct {
	adminv1.UnsafeKeyServiceServer
	adminv1.UnsafeUsageServiceServer
}

// runtimeAdmin returns the call's runtime's admin service.
func runtimeAdmin(ctx context.Context) (*admin.Service, error) {
	rt, ok := ctx.Value(runtimeKey{}).(*runtime)
	if !ok {
		return nil, apierr.FromError(errNotDispatched)
	}
	return rt.admin, nil
}

// CreateKey implements adminv1.KeyServiceServer.
func (adminService) CreateKey(ctx context.Context, req *adminv1.CreateKeyRequest) (*adminv1.CreateKeyResponse, error) {
	a, err := runtimeAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return a.CreateKey(ctx, req)
}

// GetKey implements adminv1.KeyServiceServer.
func (adminService) GetKey(ctx context.Context, req *adminv1.GetKeyRequest) (*adminv1.GetKeyResponse, error) {
	a, err := runtimeAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return a.GetKey(ctx, req)
}

// ListKeys implements adminv1.KeyServiceServer.
func (adminService) ListKeys(ctx context.Context, req *adminv1.ListKeysRequest) (*adminv1.ListKeysResponse, error) {
	a, err := runtimeAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return a.ListKeys(ctx, req)
}

// UpdateKey implements adminv1.KeyServiceServer.
func (adminService) UpdateKey(ctx context.Context, req *adminv1.UpdateKeyRequest) (*adminv1.UpdateKeyResponse, error) {
	a, err := runtimeAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return a.UpdateKey(ctx, req)
}

// RevokeKey implements adminv1.KeyServiceServer.
func (adminService) RevokeKey(ctx context.Context, req *adminv1.RevokeKeyRequest) (*adminv1.RevokeKeyResponse, error) {
	a, err := runtimeAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return a.RevokeKey(ctx, req)
}

// ListTeams implements adminv1.KeyServiceServer.
func (adminService) ListTeams(ctx context.Context, req *adminv1.ListTeamsRequest) (*adminv1.ListTeamsResponse, error) {
	a, err := runtimeAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return a.ListTeams(ctx, req)
}

// GetUsage implements adminv1.UsageServiceServer.
func (adminService) GetUsage(ctx context.Context, req *adminv1.GetUsageRequest) (*adminv1.GetUsageResponse, error) {
	a, err := runtimeAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return a.GetUsage(ctx, req)
}
