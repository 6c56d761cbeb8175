package engine

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"buf.build/go/protovalidate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/state"
)

// ErrorInfo reasons of admission's refusals, in addition to apierr's
// (apierr.ReasonCredentialsMissing: no credentials). Stable: clients
// switch on them.
const (
	// UNAUTHENTICATED: the credentials are not one "Bearer <key>".
	ReasonCredentialsMalformed = "CREDENTIALS_MALFORMED"
	// UNAUTHENTICATED: the key matches no configured key; also the end of
	// a call open when a reload removed its key's secret (KeyCalls).
	ReasonAPIKeyUnknown = "API_KEY_UNKNOWN"
	// UNAUTHENTICATED: the key was revoked through the admin API; also
	// the end of a call open when its key was revoked (KeyCalls).
	ReasonAPIKeyRevoked = "API_KEY_REVOKED"
	// UNAUTHENTICATED: the key's expiry passed; also the end of a call
	// open when its key expired (KeyCalls).
	ReasonAPIKeyExpired = "API_KEY_EXPIRED"
	// UNAUTHENTICATED, with RetryInfo: the caller's address failed
	// authentication too often; its failed authentications are refused as
	// throttled until the RetryInfo's delay has passed (a valid key still
	// passes).
	ReasonAuthThrottled = "AUTHENTICATION_THROTTLED"
	// PERMISSION_DENIED: the key lacks the method's scope.
	ReasonScopeMissing = "SCOPE_MISSING"
	// PERMISSION_DENIED: the key may not use the request's model.
	ReasonModelNotAllowed = "MODEL_NOT_ALLOWED"
	// RESOURCE_EXHAUSTED: the request is larger than limits.max_request_bytes.
	ReasonRequestTooLarge = "REQUEST_TOO_LARGE"
	// RESOURCE_EXHAUSTED, with RetryInfo: the key's rate limit.
	ReasonRateLimited = "RATE_LIMITED"
	// RESOURCE_EXHAUSTED: the key's max_concurrent_streams.
	ReasonTooManyStreams = "TOO_MANY_STREAMS"
	// UNAVAILABLE, with RetryInfo: the provider's max_concurrent and queue.
	ReasonProviderBusy = "PROVIDER_BUSY"
)

// Labels of metrics.RateLimited, one per limit.
const (
	LimitRate          = "rate"
	LimitConcurrency   = "concurrency"
	LimitProviderQueue = "provider_queue"
	LimitAuthFailures  = "auth_failures"
	// LimitResumeReaders is the limit on a key's Resume streams, in a
	// refusal's ErrorInfo metadata (its metric counts it as concurrency).
	LimitResumeReaders = "resume_readers"
)

// refusal builds admission's errors: an ErrorInfo always, a RetryInfo when
// retryAfter > 0, then the extra details. Admission's refusals with a
// RetryInfo (a key's rate, a busy provider) are served by calling again
// after it: apierr.Pushback tells a client's retry policy so.
func refusal(kind apierr.Kind, reason, msg string, meta map[string]string, retryAfter time.Duration, extra ...protoadapt.MessageV1) error {
	return &apierr.Error{Kind: kind, Reason: reason, Message: msg, Metadata: meta, RetryAfter: retryAfter, CallAgain: retryAfter > 0, Extra: extra}
}

// Caller is who calls, as a door describes it; it decides nothing.
type Caller struct {
	// Credential is what the caller presented (auth.Bearer of an
	// authorization header, auth.APIKey of an x-api-key header).
	Credential auth.Credential
	// Peer is the transport peer's address (invalid for an in-process
	// connection); ForwardedFor the values of the call's X-Forwarded-For
	// header, which count only when Peer is a trusted proxy.
	Peer         netip.Addr
	ForwardedFor []string
	// Method is the API method called, by its full gRPC name
	// (llmrelayv1.LLMService_Generate_FullMethodName): what a door's
	// operation is in llmrelay's API, which says the scope it needs and
	// whether it holds a stream slot.
	Method string
}

// methodScopes maps each API method to the scopes that open it (any one
// does). A method missing here is denied to every key, so a new RPC is
// closed until it is listed.
var methodScopes = map[string][]auth.Scope{
	llmrelayv1.LLMService_Generate_FullMethodName:   {auth.ScopeGenerate},
	llmrelayv1.LLMService_ListModels_FullMethodName: {auth.ScopeModelsList},
	// Resuming a call is reading the rest of a Generate.
	llmrelayv1.LLMService_Resume_FullMethodName: {auth.ScopeGenerate},
	// Governance: keys are the admins'; usage may be read by a dashboard's
	// key that can change nothing.
	adminv1.KeyService_CreateKey_FullMethodName:  {auth.ScopeAdmin},
	adminv1.KeyService_GetKey_FullMethodName:     {auth.ScopeAdmin},
	adminv1.KeyService_ListKeys_FullMethodName:   {auth.ScopeAdmin},
	adminv1.KeyService_UpdateKey_FullMethodName:  {auth.ScopeAdmin},
	adminv1.KeyService_RevokeKey_FullMethodName:  {auth.ScopeAdmin},
	adminv1.KeyService_ListTeams_FullMethodName:  {auth.ScopeAdmin},
	adminv1.UsageService_GetUsage_FullMethodName: {auth.ScopeAdmin, auth.ScopeUsageRead},
	// Embedding: a key of its own (an indexing job's) or any key that may
	// generate, which may send the same texts to a model already.
	llmrelayv1.LLMService_Embed_FullMethodName: {auth.ScopeEmbed, auth.ScopeGenerate},
	// The server tools a key may offer are what it uses in Generate.
	llmrelayv1.LLMService_ListTools_FullMethodName: {auth.ScopeGenerate},
}

// Admission is the engine's admission of a call: who may call, and what a
// call may take, decided by steps in one order (Order), each the one owner
// of its decision. Doors without an interceptor chain run them all with
// Admit; the gRPC door runs each as a link of its chain, in the same order
// (internal/server's TestChainOrder checks it against Order).
type Admission struct {
	Auth      *Authenticator
	Limits    *KeyLimits
	Deadlines Deadlines
	Size      RequestSize
	Validator Validator
	Resolver  Resolver
	Attach    Attach
	Budget    *Budget
	Queue     *ProviderQueue
}

// Order names admission's steps in the order they run, as the gRPC door's
// links are named.
var Order = []string{"auth", "key_limits", "deadline", "request_size", "validate", "model_access", "resolve", "attach", "budget", "provider_queue"}

// Admit runs every admission step for a caller and its request, in Order,
// and returns the call's context (its identity, its deadline, its record
// with the resolved targets and its budget hold) and release, which gives
// back what the call holds (its stream slot, its budgets' reservation if
// Generate did not settle it, its provider slot, its deadline) once it
// ended.
// ctx must carry a call record (callinfo.NewContext). An error is the
// *apierr.Error of the step that refused the call, with nothing held.
func (a *Admission) Admit(ctx context.Context, c Caller, req proto.Message) (context.Context, func(), error) {
	callinfo.From(ctx).RecordRequest(requestModelOf(req), requestIDOf(req))
	ctx, err := a.Auth.Authenticate(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return a.admitAuthenticated(ctx, c, req)
}

// AdmitAuthenticated is Admit for a caller that a door authenticated
// first, with Auth.Authenticate (whose context ctx is), before it read the
// request: the HTTP door, so that a caller without a valid key is refused
// before its body is read and decoded, and learns nothing of it.
func (a *Admission) AdmitAuthenticated(ctx context.Context, c Caller, req proto.Message) (context.Context, func(), error) {
	callinfo.From(ctx).RecordRequest(requestModelOf(req), requestIDOf(req))
	return a.admitAuthenticated(ctx, c, req)
}

// admitAuthenticated runs the steps of Admit that follow authentication.
func (a *Admission) admitAuthenticated(ctx context.Context, c Caller, req proto.Message) (context.Context, func(), error) {
	var releases []func()
	release := func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	fail := func(err error) (context.Context, func(), error) {
		release()
		return nil, nil, err
	}
	r, atLimit, err := a.Limits.Start(ctx, c.Method)
	if err != nil {
		return fail(err)
	}
	if atLimit != nil {
		// The request is here already: decide the stream limit's
		// refusal now.
		if err := atLimit.CheckRequest(ctx, req); err != nil {
			return fail(err)
		}
		r = atLimit.Release
	}
	releases = append(releases, r)
	ctx, cancel := a.Deadlines.Bound(ctx)
	releases = append(releases, cancel)
	for _, check := range []func(context.Context, any) error{a.Size.Check, a.Validator.Check, AllowModels, a.Resolver.Resolve, a.Attach.Check} {
		if err := check(ctx, req); err != nil {
			return fail(err)
		}
	}
	if r, err = a.Budget.Reserve(ctx, req); err != nil {
		return fail(err)
	}
	releases = append(releases, r)
	if r, err = a.Queue.AcquireFor(ctx, req); err != nil {
		return fail(err)
	}
	releases = append(releases, r)
	return ctx, release, nil
}

func requestModelOf(req any) string {
	m, _ := RequestModel(req)
	return m
}

func requestIDOf(req any) string {
	if g, ok := req.(interface{ GetRequestId() string }); ok {
		return g.GetRequestId()
	}
	return ""
}

// Authenticator authenticates callers: the one owner of authentication
// and of the failed-authentication throttle.
type Authenticator struct {
	// Keys are the keys callers present; nil: the server has no keys and
	// every call passes (it then only listens on loopback).
	Keys auth.Keys
	// Throttle counts failed authentications per client address; it is the
	// server's, kept across reloads.
	Throttle *auth.Throttle
	// TrustedProxies are the peers whose X-Forwarded-For names the client.
	TrustedProxies []netip.Prefix
	Metrics        *metrics.Metrics
}

// Authenticate decides who the caller is. The key is looked up first (a
// hash lookup): a valid key passes whatever its address did before, and
// must hold the method's scope (PERMISSION_DENIED, SCOPE_MISSING). A
// failed authentication (UNAUTHENTICATED: CREDENTIALS_MISSING,
// CREDENTIALS_MALFORMED or API_KEY_UNKNOWN) counts against the client's
// address (auth.ClientAddr: the peer, or the client a trusted proxy
// names), and once the address failed too often it is refused as
// AUTHENTICATION_THROTTLED with a RetryInfo instead. Keys that cannot be
// read are UNAVAILABLE and count against nobody. The identity goes into
// the returned context (auth.FromContext) and its name into the call
// record.
func (a *Authenticator) Authenticate(ctx context.Context, c Caller) (context.Context, error) {
	info := callinfo.From(ctx)
	if a == nil || a.Keys == nil {
		info.Authenticated()
		return ctx, nil
	}
	id, err := auth.Authenticate(ctx, a.Keys, c.Credential)
	if err != nil {
		return nil, a.failed(ctx, c, err)
	}
	info.SetKey(id.Name)
	info.Authenticated()
	scopes, known := methodScopes[c.Method]
	if !known {
		return nil, refusal(apierr.PermissionDenied, ReasonScopeMissing,
			"no scope opens "+c.Method+" to API keys", map[string]string{"key": id.Name, "method": c.Method}, 0)
	}
	if !slices.ContainsFunc(scopes, id.HasScope) {
		names := make([]string, len(scopes))
		for i, sc := range scopes {
			names[i] = string(sc)
		}
		return nil, refusal(apierr.PermissionDenied, ReasonScopeMissing,
			"API key "+id.Name+" lacks scope "+strings.Join(names, " or ")+" for "+c.Method,
			map[string]string{"key": id.Name, "scope": strings.Join(names, ","), "method": c.Method}, 0)
	}
	return auth.NewContext(ctx, id), nil
}

// failed is the error of a caller whose credential did not authenticate
// with err.
func (a *Authenticator) failed(ctx context.Context, c Caller, err error) error {
	reason, msg := ReasonAPIKeyUnknown, "unknown API key"
	switch {
	case errors.Is(err, auth.ErrNoCredentials):
		reason, msg = apierr.ReasonCredentialsMissing, `missing credentials: send "authorization: Bearer <key>"`
	case errors.Is(err, auth.ErrMalformedCredentials):
		reason, msg = ReasonCredentialsMalformed, err.Error()
	case errors.Is(err, auth.ErrUnknownKey), errors.Is(err, auth.ErrRevokedKey), errors.Is(err, auth.ErrExpiredKey):
		reason, msg = keyRefusal(err)
	case ctx.Err() != nil:
		return apierr.FromError(context.Cause(ctx))
	default:
		return &apierr.Error{Kind: apierr.Unavailable, Reason: apierr.ReasonStateStoreUnavailable,
			Message: "the API keys cannot be read; call again", RetryAfter: storeRetryAfter, CallAgain: true, Cause: err}
	}
	if a.Throttle != nil {
		addr := auth.AddrKey(auth.ClientAddr(c.Peer, c.ForwardedFor, a.TrustedProxies))
		if wait := a.Throttle.Fail(addr, reason, callinfo.From(ctx).RequestID()); wait > 0 {
			a.Metrics.RateLimited(LimitAuthFailures)
			name := auth.AddrName(addr)
			return refusal(apierr.Unauthenticated, ReasonAuthThrottled,
				"too many failed authentications from "+name+"; try again in "+wait.String(),
				map[string]string{"peer": name}, wait)
		}
	}
	return refusal(apierr.Unauthenticated, reason, msg, nil, 0)
}

// storeRetryAfter is the RetryInfo delay of a call refused because the
// shared state store is unavailable (fail_closed): the store is pinged
// about this often, and another replica may already reach it.
const storeRetryAfter = time.Second

// KeyLimits enforces each key's requests_per_second/burst on every call
// and its max_concurrent_streams on Generate calls, through a
// state.Admitter: per process with the memory store, across every replica
// with the redis store. Each call costs at most one Admit (one Redis round
// trip), and none for keys without limits. The limits are the caller's
// identity's (auth.Identity.Limits). It is safe for concurrent use.
type KeyLimits struct {
	store   state.Admitter
	metrics *metrics.Metrics
	// readers holds the Resume streams' leases, up to readersPerKey each
	// key (or its max_concurrent_streams, when higher); nil: Resumes are
	// not counted.
	readers       state.Leases
	readersPerKey int
	// attach decides, for a Generate at its key's stream limit, whether
	// it attaches to a kept call (Start); zero: none does.
	attach Attach
}

// WithAttach has a Generate that its key's stream limit refuses admitted
// as a Resume instead when it attaches to a resumable call kept already
// (Attach, with registry r): the kept call holds its stream slot, and a key
// at its limit may still read its own calls. It returns kl.
func (kl *KeyLimits) WithAttach(r *resume.Registry) *KeyLimits {
	kl.attach = Attach{Resume: r}
	return kl
}

// NewKeyLimits returns the key limits kept in store. m may be nil.
func NewKeyLimits(store state.Admitter, m *metrics.Metrics) *KeyLimits {
	return &KeyLimits{store: store, metrics: m}
}

// WithResumeReaders has each key's Resume streams open at once counted in
// leases, across the replicas that share leases, up to perKey or the key's
// max_concurrent_streams, whichever is higher (resume.max_readers_per_key):
// a Resume reads a call that holds a stream slot already, so it takes
// none, but one key's readers, each tailing a log, must not crowd out
// another's. It returns kl.
func (kl *KeyLimits) WithResumeReaders(leases state.Leases, perKey int) *KeyLimits {
	kl.readers, kl.readersPerKey = leases, perKey
	return kl
}

// admitReader takes a Resume stream's lease of id's key; the returned
// release gives it back.
func (kl *KeyLimits) admitReader(ctx context.Context, id *auth.Identity) (release func(), err error) {
	if kl.readers == nil {
		return func() {}, nil
	}
	limit := max(kl.readersPerKey, id.Limits.MaxConcurrentStreams)
	l, ok, err := kl.readers.Acquire(ctx, "resume-readers:"+id.Name, limit)
	switch {
	case errors.Is(err, state.ErrUnavailable):
		return nil, storeUnavailable(id.Name, err)
	case err != nil:
		return nil, apierr.FromError(err)
	case !ok:
		kl.metrics.RateLimited(LimitConcurrency)
		return nil, refusal(apierr.ResourceExhausted, ReasonTooManyStreams,
			"API key "+id.Name+" is at its limit of "+counted(limit, "Resume stream")+" open at once",
			map[string]string{"key": id.Name, "limit": LimitResumeReaders}, 0)
	}
	return l.Release, nil
}

// storeUnavailable is the error of a call of key refused because a
// fail_closed store is unavailable.
func storeUnavailable(key string, err error) error {
	return &apierr.Error{
		Kind: apierr.Unavailable, Reason: apierr.ReasonStateStoreUnavailable,
		Message:    "the store of shared limits is unavailable, and this server refuses calls until it is back; call again",
		Metadata:   map[string]string{"key": key},
		RetryAfter: storeRetryAfter,
		Cause:      err,
	}
}

// quota returns an identity's quota, zero for none.
func quota(id *auth.Identity) state.Quota {
	q := state.Quota{MaxConcurrent: id.Limits.MaxConcurrentStreams}
	if id.Limits.RequestsPerSecond > 0 {
		q.Rate, q.Burst = id.Limits.RequestsPerSecond, max(1, id.Limits.Burst)
	}
	return q
}

// Admit admits one call of the caller's key (auth.FromContext) to method:
// a rate token for every call, and for a Generate a stream slot under the
// key's stream limit too (RESOURCE_EXHAUSTED, TOO_MANY_STREAMS), held
// until release. A Resume takes a rate token but no stream slot (the
// resumable call it reads holds one for as long as it runs): it takes a
// reader's lease instead (WithResumeReaders). A refused call takes
// nothing. A Generate refused at its stream limit is refused here without
// a look at its request (Start leaves it to the request, which may attach).
// While a fail_closed store is unavailable, calls of limited keys fail
// UNAVAILABLE (STATE_STORE_UNAVAILABLE).
func (kl *KeyLimits) Admit(ctx context.Context, method string) (release func(), err error) {
	release, atLimit, err := kl.Start(ctx, method)
	if atLimit != nil {
		kl.metrics.RateLimited(LimitConcurrency)
		return nil, atLimit.refusal
	}
	return release, err
}

// Start is Admit for a call whose request has not arrived yet (the gRPC
// door's stream calls are admitted as they start). A Generate that its
// key's stream limit refuses is not refused yet: Start returns atLimit
// instead, the check its request decides (AtStreamLimit.CheckRequest),
// for it may attach to a call its key keeps (WithAttach). Every other
// call is admitted, or refused, as Admit does.
func (kl *KeyLimits) Start(ctx context.Context, method string) (release func(), atLimit *AtStreamLimit, err error) {
	id, ok := auth.FromContext(ctx)
	if kl == nil || !ok { // no keys configured; health and reflection
		return func() {}, nil, nil
	}
	releaseCall, err := kl.admit(ctx, id, method)
	if full, ok := err.(*AtStreamLimit); ok {
		return nil, full, nil
	}
	if err != nil || method != llmrelayv1.LLMService_Resume_FullMethodName {
		return releaseCall, nil, err
	}
	releaseReader, err := kl.admitReader(ctx, id)
	if err != nil {
		releaseCall()
		return nil, nil, err
	}
	return func() {
		releaseReader()
		releaseCall()
	}, nil, nil
}

// AtStreamLimit is a Generate that its key's max_concurrent_streams
// refused before its request arrived (KeyLimits.Start): its request
// decides. It is used by the call's goroutine only.
type AtStreamLimit struct {
	kl      *KeyLimits
	refusal error
	release func()
}

// Error implements error: the refusal, which KeyLimits.admit returns it
// as until Start takes it apart.
func (a *AtStreamLimit) Error() string { return a.refusal.Error() }

// CheckRequest decides the call of request req: one that attaches to a
// resumable call its key keeps (Attach) runs nothing, and is admitted as
// a Resume reading that call would be (a rate token and a reader's lease,
// which Release gives back); any other is refused, RESOURCE_EXHAUSTED,
// TOO_MANY_STREAMS.
func (a *AtStreamLimit) CheckRequest(ctx context.Context, req any) error {
	if !a.kl.attach.Decide(ctx, req) {
		a.kl.metrics.RateLimited(LimitConcurrency)
		return a.refusal
	}
	r, err := a.kl.Admit(ctx, llmrelayv1.LLMService_Resume_FullMethodName)
	if err != nil {
		return err
	}
	a.release = r
	return nil
}

// Release gives back what CheckRequest took, if anything.
func (a *AtStreamLimit) Release() {
	if a.release != nil {
		a.release()
	}
}

// admit takes a rate token and, for a Generate, a stream slot of id's key.
func (kl *KeyLimits) admit(ctx context.Context, id *auth.Identity, method string) (release func(), err error) {
	q := quota(id)
	if method != llmrelayv1.LLMService_Generate_FullMethodName {
		q.MaxConcurrent = 0
	}
	if q == (state.Quota{}) {
		return func() {}, nil
	}
	adm, err := kl.store.Admit(ctx, id.Name, q)
	switch {
	case errors.Is(err, state.ErrUnavailable):
		return nil, storeUnavailable(id.Name, err)
	case err != nil: // the call's own cancellation or deadline
		return nil, apierr.FromError(err)
	}
	switch {
	case adm.Allowed:
		if adm.Lease != nil {
			return adm.Lease.Release, nil
		}
		return func() {}, nil
	case adm.Refused == state.LimitConcurrency:
		// Counted once Start's caller refuses it: it may yet attach.
		return nil, &AtStreamLimit{kl: kl, refusal: refusal(apierr.ResourceExhausted, ReasonTooManyStreams,
			tooManyStreams(id.Name, adm.Open, q.MaxConcurrent),
			map[string]string{"key": id.Name, "limit": LimitConcurrency}, 0)}
	default:
		kl.metrics.RateLimited(LimitRate)
		return nil, refusal(apierr.ResourceExhausted, ReasonRateLimited,
			"API key "+id.Name+" exceeded its rate of "+strconv.FormatFloat(q.Rate, 'g', -1, 64)+" requests per second",
			map[string]string{"key": id.Name, "limit": LimitRate}, max(adm.RetryAfter, time.Millisecond))
	}
}

// tooManyStreams is the message of a call of key refused at its
// max_concurrent_streams limit with open streams open (0: the store did
// not count them). A limit lowered below the streams open leaves more
// open than the limit.
func tooManyStreams(key string, open, limit int) string {
	if open <= 0 {
		return "API key " + key + " is at its limit of " + counted(limit, "stream") + " open at once"
	}
	return "API key " + key + " already has " + counted(open, "stream") + " open, and its limit is " + strconv.Itoa(limit)
}

// counted is n of noun, a noun whose plural takes an s: "1 stream", "2
// streams".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Deadlines is the one owner of a call's deadline: a call without one gets
// Default, and one further away than Max is brought in to Max, so every
// wait and provider call below has a bound. The plan reads the result from
// the call's context; only a route's timeout may bring it in further,
// once, as Generate starts; a provider's per-attempt `timeout`
// (internal/provider/httpx) bounds each of its HTTP requests within it.
// Zero Default or Max switches that half off.
//
// It is the deadlines section's default and max (the rest of the section
// is retry.StallSettings).
type Deadlines struct {
	// Default applies to calls that arrive without a deadline.
	Default time.Duration `yaml:"default"`
	// Max clamps longer client deadlines.
	Max time.Duration `yaml:"max"`
	// StatusMargin, when set, ends a call whose client set its deadline
	// that much before it (at most a twentieth of the time left), so
	// that the call's status reaches the client before the transport
	// gives up on the stream at the client's deadline: grpc-go's server
	// resets a stream (RST_STREAM CANCEL) the moment the deadline its
	// client sent passes, and a client that sees the reset first gets
	// CANCELLED, without the ErrorInfo, instead of DEADLINE_EXCEEDED.
	// The gRPC chain's deadline link sets it; it is not configuration.
	StatusMargin time.Duration `yaml:"-"`
}

// Bound returns ctx with the call's deadline, and the cancel that ends it.
// A deadline of its own is a call context (callctx), which the server's
// drain cancels rather than adding a context of its own.
func (d Deadlines) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	switch {
	case !ok && d.Default > 0:
		return callctx.WithDeadline(ctx, time.Now().Add(d.Default))
	case ok && d.Max > 0 && time.Until(dl) > d.Max:
		return callctx.WithDeadline(ctx, time.Now().Add(d.Max))
	case ok && d.StatusMargin > 0:
		return callctx.WithDeadline(ctx, dl.Add(-min(d.StatusMargin, time.Until(dl)/20)))
	}
	return ctx, func() {}
}

// RequestSize refuses a request whose encoded size exceeds it
// (limits.max_request_bytes) with RESOURCE_EXHAUSTED, reason
// REQUEST_TOO_LARGE, and no RetryInfo, since the same request never fits.
// Zero switches it off.
type RequestSize int

// Limits are the engine's part of the limits section: what one request may
// ask of the server (the rest of the section is the gRPC server's).
type Limits struct {
	// MaxRequestBytes caps a request's total encoded size; larger requests
	// fail RESOURCE_EXHAUSTED with reason REQUEST_TOO_LARGE (RequestSize).
	MaxRequestBytes int `yaml:"max_request_bytes"`
	// ProviderQueue is how many calls may wait, per provider, for one of
	// the provider's max_concurrent slots; beyond it calls fail at once
	// with UNAVAILABLE (PROVIDER_BUSY).
	ProviderQueue int `yaml:"provider_queue"`
	// DefaultMaxOutputBytes is the output limit of a request that sets
	// none (output_limit.max_bytes): the most bytes of output (text,
	// refusals, tool calls, reasoning) one attempt may stream.
	DefaultMaxOutputBytes int64 `yaml:"default_max_output_bytes"`
	// MaxOutputBytes caps any request's output limit. Final repeats the
	// reply, so above about 3.5 MiB clients must raise their receive
	// limit (4 MiB by default in gRPC libraries).
	MaxOutputBytes int64 `yaml:"max_output_bytes"`
}

// Check implements the step.
func (max RequestSize) Check(_ context.Context, req any) error {
	m, ok := req.(proto.Message)
	if max <= 0 || !ok {
		return nil
	}
	if n := proto.Size(m); n > int(max) {
		limit := strconv.Itoa(int(max))
		return refusal(apierr.ResourceExhausted, ReasonRequestTooLarge,
			"the request is "+strconv.Itoa(n)+" bytes, over the server's limit of "+limit,
			map[string]string{"max_bytes": limit}, 0)
	}
	return nil
}

// CheckShallow is Check where it needs little stack: for a
// GenerateRequest whose nesting has a bound (boundedDepth), which
// proto.Size walks a few levels deep. A google.protobuf.Struct nests as
// deep as its sender made it, and so does proto.Size through it: such a
// request, and any other message, is not answered here.
func (max RequestSize) CheckShallow(ctx context.Context, req any) (bool, error) {
	if g, ok := req.(*llmrelayv1.GenerateRequest); max <= 0 || ok && boundedDepth(g) {
		return true, max.Check(ctx, req)
	}
	return false, nil
}

// boundedDepth reports whether r's nesting has a bound: no
// google.protobuf.Struct set, the one type under GenerateRequest that nests
// without one (TestBoundedDepthKnowsEveryStruct finds them all).
func boundedDepth(r *llmrelayv1.GenerateRequest) bool {
	if r.ProviderOptions != nil || r.GetResponseFormat().GetJsonSchema() != nil {
		return false
	}
	for _, t := range r.Tools {
		if t.GetParameters() != nil {
			return false
		}
	}
	return true
}

// Validator checks requests against their buf.validate rules (in
// proto/llmrelay/v1/llmrelay.proto). A violation is INVALID_ARGUMENT with
// an ErrorInfo (reason INVALID_REQUEST) and a google.rpc.BadRequest: one
// field violation per broken rule, its field path (`messages[0].role`),
// its message as the description and its rule id (`role.defined`) as the
// reason. A GenerateRequest that wellFormed passes (plain Go mirroring the
// same rules) skips protovalidate; any other goes through it, so the
// violations a client sees always come from protovalidate.
type Validator struct{ V protovalidate.Validator }

// CheckShallow is Check where it needs little stack: a GenerateRequest
// that wellFormed passes (which reads the request's fields and lists a
// level or two deep, and never into a Struct) is valid. Any other request
// needs protovalidate, whose evaluation takes about 7 KiB of stack, and is
// not answered here.
func (v Validator) CheckShallow(_ context.Context, req any) (bool, error) {
	g, ok := req.(*llmrelayv1.GenerateRequest)
	return v.V == nil || ok && wellFormed(g), nil
}

// Check implements the step.
func (v Validator) Check(_ context.Context, req any) error {
	m, ok := req.(proto.Message)
	if v.V == nil || !ok {
		return nil
	}
	if g, ok := m.(*llmrelayv1.GenerateRequest); ok && wellFormed(g) {
		return nil
	}
	err := v.V.Validate(m)
	if err == nil {
		return nil
	}
	var ve *protovalidate.ValidationError
	if !errors.As(err, &ve) {
		// A rule that does not compile: the contract is broken.
		return &apierr.Error{Kind: apierr.Internal, Reason: apierr.ReasonInternal, Message: "internal error", Cause: err}
	}
	fv := make([]*errdetails.BadRequest_FieldViolation, len(ve.Violations))
	for i, vi := range ve.ToProto().GetViolations() {
		fv[i] = &errdetails.BadRequest_FieldViolation{
			Field:       protovalidate.FieldPathString(vi.GetField()),
			Description: vi.GetMessage(),
			Reason:      vi.GetRuleId(),
		}
	}
	return &apierr.Error{Kind: apierr.InvalidArgument, Reason: apierr.ReasonInvalidRequest, Message: err.Error(), FieldViolations: fv}
}

// AllowModels checks that the caller's key may use the model a request
// names and each of its fallback_models (PERMISSION_DENIED,
// MODEL_NOT_ALLOWED): a route is allowed by its name, whatever its targets
// are, and a "<provider>/<model>" by the key's patterns on the provider
// and model it resolves to (provider.SplitModel, auth.MatchPattern). It
// runs after validation, so a malformed model is INVALID_ARGUMENT, not a
// permission problem. Calls without an identity (no keys configured) and
// requests without a model pass.
func AllowModels(ctx context.Context, req any) error {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return nil
	}
	model, ok := RequestModel(req)
	if !ok {
		return nil
	}
	if !allowed(id, model) {
		return refusal(apierr.PermissionDenied, ReasonModelNotAllowed,
			"API key "+id.Name+" may not use model "+model,
			map[string]string{"key": id.Name, "model": model}, 0)
	}
	for i, f := range requestFallbacks(req) {
		if !allowed(id, f) {
			field := "fallback_models[" + strconv.Itoa(i) + "]"
			return refusal(apierr.PermissionDenied, ReasonModelNotAllowed,
				"API key "+id.Name+" may not use model "+f+" ("+field+")",
				map[string]string{"key": id.Name, "model": f, "field": field}, 0)
		}
	}
	return nil
}

// allowed reports whether the key may use the model a request names: a
// route by its name (which has no "/"), a provider's model by
// "<provider>/<model>" (a name with an empty part by none).
func allowed(id *auth.Identity, name string) bool {
	p, m, ok := provider.SplitModel(name)
	if !strings.Contains(name, "/") {
		return id.AllowsRoute(name)
	}
	// Split where the provider set splits it, so the patterns match what
	// the request resolves to.
	return ok && id.AllowsModel(p, m)
}

// Resolver resolves the request's model (a route's name or
// "<provider>/<model>") and its fallback_models once, with the route
// table's Resolve, the one place that resolves them (it has
// provider.Set.Resolve parse "<provider>/<model>"), and records the call's
// targets in the call record: the provider queue and Generate take them
// from there. A name that does not resolve is INVALID_ARGUMENT, reason
// UNKNOWN_PROVIDER or UNKNOWN_MODEL, with a BadRequest on its field; the
// message names only what was asked for. Requests without a model pass.
// It runs after AllowModels, so a key that may not use a model learns
// nothing about whether it exists.
type Resolver struct{ Routes *route.Table }

// Resolve implements the step.
func (r Resolver) Resolve(ctx context.Context, req any) error {
	model, ok := RequestModel(req)
	if !ok {
		return nil
	}
	res, err := r.Routes.Resolve(ctx, model, requestFallbacks(req))
	if err != nil {
		return apierr.FromError(err)
	}
	callinfo.From(ctx).SetResolved(res)
	return nil
}

// The request fields admission reads, as the generated getters.
type (
	modelGetter    interface{ GetModel() string }
	fallbackGetter interface{ GetFallbackModels() []string }
)

// RequestModel returns the model a request names, if it is a request that
// names one (a GenerateRequest).
func RequestModel(msg any) (string, bool) {
	g, ok := msg.(modelGetter)
	if !ok {
		return "", false
	}
	return g.GetModel(), true
}

// requestFallbacks returns the fallback_models a request names, if any.
func requestFallbacks(msg any) []string {
	if g, ok := msg.(fallbackGetter); ok {
		return g.GetFallbackModels()
	}
	return nil
}

// ProviderBusyRetryAfter is the RetryInfo delay of a call refused because
// its provider's queue was full or its deadline passed in the queue.
const ProviderBusyRetryAfter = time.Second

// ProviderQueue bounds the Generate calls in flight per provider (the
// provider's `max_concurrent`). A call beyond the bound waits, first come
// first served, in a queue of bounded length until a slot frees up or its
// deadline passes; a call that finds the queue full, or whose deadline
// passes in it, fails UNAVAILABLE (PROVIDER_BUSY) with a RetryInfo. The
// slot is the provider's of the call's first target (resolved before it)
// and is held for the whole call: every attempt and the waits between
// them; a call that falls back to another provider keeps the first one's
// slot. It is safe for concurrent use.
type ProviderQueue struct {
	providers map[string]*providerSlots
	metrics   *metrics.Metrics
}

type providerSlots struct {
	slots    chan struct{} // one token per call in flight
	waiting  atomic.Int64
	maxQueue int64
}

// NewProviderQueue builds the queues: maxConcurrent maps provider names to
// their bound (zero or absent: unbounded), queueLen is how many calls may
// wait per provider (zero: none wait, a call beyond the bound fails at
// once). m may be nil.
func NewProviderQueue(maxConcurrent map[string]int, queueLen int, m *metrics.Metrics) *ProviderQueue {
	q := &ProviderQueue{providers: make(map[string]*providerSlots), metrics: m}
	for name, n := range maxConcurrent {
		if n > 0 {
			q.providers[name] = &providerSlots{slots: make(chan struct{}, n), maxQueue: int64(queueLen)}
		}
	}
	return q
}

// Inherit makes q use prev's slots (and waiting calls) for every provider
// whose max_concurrent and queue length are the same in both, so that
// after a config reload the calls that started before it and those that
// start after count against one bound. A provider whose bound changed gets
// fresh slots: until the calls under the old bound end, both bounds hold
// side by side.
func (q *ProviderQueue) Inherit(prev *ProviderQueue) {
	if prev == nil {
		return
	}
	for name, p := range q.providers {
		if old := prev.providers[name]; old != nil && cap(old.slots) == cap(p.slots) && old.maxQueue == p.maxQueue {
			q.providers[name] = old
		}
	}
}

// Acquire takes a slot of the named provider, waiting in its queue if
// needed, and returns the function that gives it back. It fails with
// UNAVAILABLE (PROVIDER_BUSY, RetryInfo) when the queue is full or ctx's
// deadline passes while waiting, and with CANCELLED when ctx is cancelled.
func (q *ProviderQueue) Acquire(ctx context.Context, provider string) (release func(), err error) {
	p := q.providers[provider]
	if p == nil {
		return func() {}, nil
	}
	release = func() { <-p.slots }
	select {
	case p.slots <- struct{}{}:
		return release, nil
	default:
	}
	if p.waiting.Add(1) > p.maxQueue {
		p.waiting.Add(-1)
		return nil, q.busy(provider, "its queue of "+strconv.FormatInt(p.maxQueue, 10)+" waiting calls is full")
	}
	defer p.waiting.Add(-1)
	select {
	case p.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, refusal(apierr.Canceled, apierr.ReasonCancelled, "call cancelled while waiting for provider "+provider, nil, 0)
		}
		return nil, q.busy(provider, "the call's deadline passed while it waited")
	}
}

func (q *ProviderQueue) busy(provider, why string) error {
	q.metrics.RateLimited(LimitProviderQueue)
	return refusal(apierr.Unavailable, ReasonProviderBusy,
		"provider "+provider+" is at its max_concurrent calls and "+why,
		map[string]string{"provider": provider, "limit": LimitProviderQueue}, ProviderBusyRetryAfter)
}

// AcquireFor takes a slot for the provider of the call's first target
// (the call record's), if it has one, for the call of request req: none
// for a Generate that attaches to a resumable call kept already (Attach),
// which asks no provider anything.
func (q *ProviderQueue) AcquireFor(ctx context.Context, req any) (func(), error) {
	if q == nil || attaching(ctx, req) {
		return func() {}, nil
	}
	t, ok := callinfo.From(ctx).Target()
	if !ok {
		return func() {}, nil
	}
	return q.Acquire(ctx, t.Entry.Config.Name)
}

// Waiting returns how many calls wait in the named provider's queue.
func (q *ProviderQueue) Waiting(provider string) int64 {
	if p := q.providers[provider]; p != nil {
		return p.waiting.Load()
	}
	return 0
}
