// Package admin is the gRPC door of llmrelay.admin.v1: KeyService and
// UsageService, thin handlers that convert requests into the operations of
// internal/apikeys (keys) and internal/spend (usage, teams, budgets'
// windows) and their results back. They decide nothing themselves; errors become
// statuses in internal/apierr. Who may call them (the admin and
// usage.read scopes) is admission's.
package admin

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/apikeys"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/spend"
)

// MaxUsageDays is the most days one GetUsage covers.
const MaxUsageDays = 366

// MaxUsageRecords is the most records one GetUsage reads, and
// MaxUsageBytes the most bytes it answers with: under gRPC's default limit
// on a received message, 4 MiB, which a longer answer passed (a year of
// 200 keys), failing in every client as RESOURCE_EXHAUSTED. A range of
// days holding more is refused.
const (
	MaxUsageRecords = 50_000
	MaxUsageBytes   = 4<<20 - 16<<10
)

// Service implements KeyService and UsageService. It is safe for
// concurrent use.
type Service struct {
	adminv1.UnimplementedKeyServiceServer
	adminv1.UnimplementedUsageServiceServer

	keys    *apikeys.Admin
	budgets *spend.Budgeter
	now     func() time.Time
}

// New returns the admin service over keys and budgets; now is its clock
// (nil: time.Now), for keys' states.
func New(keys *apikeys.Admin, budgets *spend.Budgeter, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{keys: keys, budgets: budgets, now: now}
}

// actor returns who calls: the caller's key and the call's request id.
func actor(ctx context.Context) apikeys.Actor {
	a := apikeys.Actor{RequestID: callinfo.From(ctx).RequestID()}
	if id, ok := auth.FromContext(ctx); ok {
		a.Key = id.Name
	}
	return a
}

// CreateKey implements KeyService.
func (s *Service) CreateKey(ctx context.Context, req *adminv1.CreateKeyRequest) (*adminv1.CreateKeyResponse, error) {
	k, err := keyOf(req.GetKey())
	if err != nil {
		return nil, apierr.FromError(err)
	}
	nk, secret, err := s.keys.Create(ctx, actor(ctx), k)
	if err != nil {
		return nil, apierr.FromError(err)
	}
	pk, err := s.keyProto(ctx, nk)
	if err != nil {
		return nil, apierr.FromError(err)
	}
	return &adminv1.CreateKeyResponse{Key: pk, Secret: secret}, nil
}

// GetKey implements KeyService.
func (s *Service) GetKey(ctx context.Context, req *adminv1.GetKeyRequest) (*adminv1.GetKeyResponse, error) {
	k, err := s.keys.Get(ctx, req.GetName())
	if err != nil {
		return nil, apierr.FromError(err)
	}
	pk, err := s.keyProto(ctx, k)
	if err != nil {
		return nil, apierr.FromError(err)
	}
	return &adminv1.GetKeyResponse{Key: pk}, nil
}

// ListKeys implements KeyService.
func (s *Service) ListKeys(ctx context.Context, req *adminv1.ListKeysRequest) (*adminv1.ListKeysResponse, error) {
	keys, next, err := s.keys.List(ctx, apikeys.ListQuery{
		PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken(), ShowRevoked: req.GetShowRevoked(), Team: req.GetTeam(),
	})
	if err != nil {
		return nil, apierr.FromError(err)
	}
	pks, err := s.keyProtos(ctx, keys)
	if err != nil {
		return nil, apierr.FromError(err)
	}
	return &adminv1.ListKeysResponse{Keys: pks, NextPageToken: next}, nil
}

// UpdateKey implements KeyService.
func (s *Service) UpdateKey(ctx context.Context, req *adminv1.UpdateKeyRequest) (*adminv1.UpdateKeyResponse, error) {
	k, err := keyOf(req.GetKey())
	if err != nil {
		return nil, apierr.FromError(err)
	}
	uk, err := s.keys.Update(ctx, actor(ctx), k, req.GetUpdateMask().GetPaths())
	if err != nil {
		return nil, apierr.FromError(err)
	}
	pk, err := s.keyProto(ctx, uk)
	if err != nil {
		return nil, apierr.FromError(err)
	}
	return &adminv1.UpdateKeyResponse{Key: pk}, nil
}

// RevokeKey implements KeyService.
func (s *Service) RevokeKey(ctx context.Context, req *adminv1.RevokeKeyRequest) (*adminv1.RevokeKeyResponse, error) {
	k, err := s.keys.Revoke(ctx, actor(ctx), req.GetName())
	if err != nil {
		return nil, apierr.FromError(err)
	}
	pk, err := s.keyProto(ctx, k)
	if err != nil {
		return nil, apierr.FromError(err)
	}
	return &adminv1.RevokeKeyResponse{Key: pk}, nil
}

// ListTeams implements KeyService: the configured teams, with their
// budgets' current windows.
func (s *Service) ListTeams(ctx context.Context, req *adminv1.ListTeamsRequest) (*adminv1.ListTeamsResponse, error) {
	teams, err := s.budgets.TeamsStatus(ctx, req.GetName())
	if err != nil {
		return nil, apierr.FromError(err)
	}
	resp := &adminv1.ListTeamsResponse{Teams: make([]*adminv1.Team, len(teams))}
	for i, t := range teams {
		pt := &adminv1.Team{Name: t.Team}
		for _, st := range t.Budgets {
			pt.Budgets = append(pt.Budgets, budgetProto(st.Budget, &st))
		}
		resp.Teams[i] = pt
	}
	return resp, nil
}

// GetUsage implements UsageService.
func (s *Service) GetUsage(ctx context.Context, req *adminv1.GetUsageRequest) (*adminv1.GetUsageResponse, error) {
	from, to := req.GetStartDay(), req.GetEndDay()
	if from == "" {
		from = s.budgets.Today()
	}
	if to == "" {
		to = from
	}
	f, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return nil, apierr.FromError(&apikeys.FieldError{Field: "start_day", Problem: fmt.Sprintf("%q is not a day (YYYY-MM-DD)", from)})
	}
	l, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return nil, apierr.FromError(&apikeys.FieldError{Field: "end_day", Problem: fmt.Sprintf("%q is not a day (YYYY-MM-DD)", to)})
	}
	switch days := int(l.Sub(f).Hours()/24) + 1; {
	case days < 1:
		return nil, apierr.FromError(&apikeys.FieldError{Field: "end_day", Problem: "is before start_day " + from})
	case days > MaxUsageDays:
		return nil, apierr.FromError(&apikeys.FieldError{Field: "end_day", Problem: fmt.Sprintf("is %d days after start_day: at most %d days after it, %d days at once", days-1, MaxUsageDays-1, MaxUsageDays)})
	}
	recs, err := s.budgets.Usage(ctx, spend.UsageQuery{From: from, To: to, Key: req.GetKey(), Team: req.GetTeam(), Limit: MaxUsageRecords + 1})
	if err != nil {
		return nil, apierr.FromError(err)
	}
	tooMany := func() error {
		return apierr.FromError(&apikeys.FieldError{Field: "end_day", Problem: fmt.Sprintf(
			"the days from %s to %s hold more records than one answer carries (at most %d, in %d bytes): ask for fewer days, or for one key or team",
			from, to, MaxUsageRecords, MaxUsageBytes)})
	}
	if len(recs) > MaxUsageRecords {
		return nil, tooMany()
	}
	resp := &adminv1.GetUsageResponse{Records: make([]*adminv1.UsageRecord, 0, len(recs))}
	for _, r := range recs {
		pr := &adminv1.UsageRecord{
			Day: r.Day, Calls: uint64(r.Calls), CostUsd: spend.USD(r.Cost),
			EstimatedInputTokens: uint64(max(r.Estimated.InputTokens, 0)), EstimatedOutputTokens: uint64(max(r.Estimated.OutputTokens, 0)),
			EstimatedCostUsd: spend.USD(r.EstimatedCost),
			Usage: &llmrelayv1.Usage{
				InputTokens: uint64(r.Usage.InputTokens), OutputTokens: uint64(r.Usage.OutputTokens),
				ReasoningTokens: uint64(r.Usage.ReasoningTokens), CachedInputTokens: uint64(r.Usage.CachedInputTokens),
				CacheCreationInputTokens: uint64(r.Usage.CacheCreationInputTokens),
			},
		}
		if r.Key != "" {
			pr.Subject = &adminv1.UsageRecord_Key{Key: r.Key}
		} else {
			pr.Subject = &adminv1.UsageRecord_Team{Team: r.Team}
		}
		resp.Records = append(resp.Records, pr)
	}
	if proto.Size(resp) > MaxUsageBytes {
		return nil, tooMany()
	}
	return resp, nil
}

// keyOf converts a request's key. An expires_at that is no time (seconds
// or nanos out of range) or is the first instant of year 1, which Go's
// zero time stands for and the key would take as "never", is refused
// here.
func keyOf(pk *adminv1.Key) (apikeys.Key, error) {
	k := apikeys.Key{
		Name: pk.GetName(), Scopes: pk.GetScopes(), Models: pk.GetModels(), Tools: pk.GetTools(),
		Limits: apikeys.Limits{
			RequestsPerSecond:    pk.GetLimits().GetRequestsPerSecond(),
			Burst:                int(pk.GetLimits().GetBurst()),
			MaxConcurrentStreams: int(pk.GetLimits().GetMaxConcurrentStreams()),
		},
		Team: pk.GetTeam(), Metadata: maps.Clone(pk.GetMetadata()),
	}
	for _, b := range pk.GetBudgets() {
		k.Budgets = append(k.Budgets, spend.Budget{Window: spend.Window(b.GetWindow()), MaxCostUSD: b.GetMaxCostUsd(), MaxTokens: int64(b.GetMaxTokens())})
	}
	if e := pk.GetExpiresAt(); e != nil {
		if err := e.CheckValid(); err != nil {
			return k, &apikeys.FieldError{Field: "key.expires_at", Problem: "is not a valid time: " + strings.TrimPrefix(err.Error(), "proto: ")}
		}
		if k.ExpiresAt = e.AsTime(); k.ExpiresAt.IsZero() {
			return k, &apikeys.FieldError{Field: "key.expires_at", Problem: "is in the past: " + k.ExpiresAt.Format(time.RFC3339)}
		}
	}
	return k, nil
}

// keyProto converts a key, with its own budgets' current windows.
func (s *Service) keyProto(ctx context.Context, k *apikeys.Key) (*adminv1.Key, error) {
	pks, err := s.keyProtos(ctx, []*apikeys.Key{k})
	if err != nil {
		return nil, err
	}
	return pks[0], nil
}

// keyProtos converts keys, with their own budgets' current windows, read
// in one store round trip.
func (s *Service) keyProtos(ctx context.Context, keys []*apikeys.Key) ([]*adminv1.Key, error) {
	kb := make([]spend.KeyBudgets, len(keys))
	for i, k := range keys {
		kb[i] = spend.KeyBudgets{Key: k.Name, Budgets: k.Budgets}
	}
	status, err := s.budgets.KeysStatus(ctx, kb)
	if err != nil {
		return nil, err
	}
	out := make([]*adminv1.Key, len(keys))
	for i, k := range keys {
		out[i] = s.convertKey(k, status[i])
	}
	return out, nil
}

// convertKey converts a key whose own budgets are in status.
func (s *Service) convertKey(k *apikeys.Key, status []spend.Status) *adminv1.Key {
	pk := &adminv1.Key{
		Name: k.Name, Scopes: k.Scopes, Models: k.Models, Tools: k.Tools, Team: k.Team, Metadata: k.Metadata, CreatedBy: k.CreatedBy,
		Source: adminv1.KeySource_KEY_SOURCE_STORE, State: adminv1.KeyState_KEY_STATE_ACTIVE,
		CreatedAt: timestamp(k.CreatedAt), UpdatedAt: timestamp(k.UpdatedAt), RevokedAt: timestamp(k.RevokedAt), ExpiresAt: timestamp(k.ExpiresAt),
	}
	if k.Source == apikeys.SourceConfig {
		pk.Source = adminv1.KeySource_KEY_SOURCE_CONFIG
	}
	switch k.State(s.now()) {
	case apikeys.Expired:
		pk.State = adminv1.KeyState_KEY_STATE_EXPIRED
	case apikeys.Revoked:
		pk.State = adminv1.KeyState_KEY_STATE_REVOKED
	}
	if l := k.Limits; l != (apikeys.Limits{}) {
		pk.Limits = &adminv1.KeyLimits{RequestsPerSecond: l.RequestsPerSecond, Burst: uint32(l.Burst), MaxConcurrentStreams: uint32(l.MaxConcurrentStreams)}
	}
	for i, b := range k.Budgets {
		var st *spend.Status
		if i < len(status) {
			st = &status[i]
		}
		pk.Budgets = append(pk.Budgets, budgetProto(b, st))
	}
	return pk
}

// budgetProto converts a budget, a key's or a team's, with its current
// window's spend when st is not nil.
func budgetProto(b spend.Budget, st *spend.Status) *adminv1.Budget {
	pb := &adminv1.Budget{Window: string(b.Window), MaxCostUsd: b.MaxCostUSD, MaxTokens: uint64(b.MaxTokens)}
	if st != nil {
		pb.SpentCostUsd, pb.SpentTokens, pb.ResetsAt = spend.USD(st.Used.Cost), uint64(max(0, st.Used.Tokens)), timestamp(st.Resets)
	}
	return pb
}

func timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}
