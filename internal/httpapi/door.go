// Package httpapi is llmrelay's HTTP doors: OpenAI's Chat Completions API
// (POST /v1/chat/completions), OpenAI's Responses API, stateless (POST
// /v1/responses), and Anthropic's Messages API (POST
// /v1/messages, and its token counting, POST /v1/messages/count_tokens),
// OpenAI's embeddings (POST /v1/embeddings, embeddings.go), with GET /v1/models and GET /v1/models/{model} in either's shape, in
// front of the same engine as the gRPC service.
// Existing SDKs and tools use llmrelay by changing their base URL.
//
// A door translates and decides nothing: a request in a vendor's format
// becomes the engine's GenerateRequest (one file per format: openai.go,
// responses.go, anthropic.go), the caller's key header becomes the engine's credential,
// the engine runs admission and the call (authentication, limits, model
// resolution, validation, attempts, fallback, structured output, hedging)
// and hands its events to an exchange (exchange.go), which writes them in
// the format; the engine's typed errors become HTTP statuses and retry
// headers in one place (errors.go) and each format's error body.
//
// What a format cannot say is asked of the engine in its terms: a
// streaming client that cannot discard what it was shown (every SDK, unless
// it sends llmrelay-midstream: restart) gets retry.midstream FAIL and no
// structured-output re-asks, so a failure after output ends the stream with
// the format's error event instead of a restart.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// Options configure the doors.
type Options struct {
	// Engine returns the engine a call starts on: the server's current
	// runtime's, so that a reload applies to the calls after it.
	Engine func() *engine.Engine
	// Logger writes each call's "finished call" line.
	Logger *slog.Logger
	// Metrics counts the responses (nil: none).
	Metrics *metrics.Metrics
	// MaxBodyBytes bounds a request body (the server's
	// limits.max_recv_msg_bytes, gRPC's bound on one message).
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of a request body.
	BodyTimeout time.Duration
	// Now is the clock of the replies' created times; nil: time.Now.
	Now func() time.Time
	// Tracing makes each request's server span; nil: tracing is off.
	Tracing *telemetry.Tracing
}

// New returns the doors' handler.
func New(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	d := &door{o: o}
	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) { mux.HandleFunc(pattern, d.traced(pattern, h)) }
	handle("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { d.generate(w, r, openAI{}) })
	handle("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) { d.generate(w, r, responses{}) })
	handle("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { d.generate(w, r, anthropic{}) })
	handle("GET /v1/models", d.models)
	// A model's id may hold "/" (mock/echo): the SDKs send it escaped
	// (mock%2Fecho), a hand-written URL may not; both are the rest of the
	// path.
	handle(patternModel, d.models)
	handle(http.MethodPost+" "+pathCountTokens, d.countTokens)
	handle(http.MethodPost+" "+pathEmbeddings, d.embeddings)
	handle("/", d.notFound)
	return mux
}

// traced serves h in the request's server span (telemetry.StartHTTPServer),
// its route the pattern's path ("/": none), when tracing is on.
func (d *door) traced(pattern string, h http.HandlerFunc) http.HandlerFunc {
	if !d.o.Tracing.Enabled() {
		return h
	}
	_, route, ok := strings.Cut(pattern, " ")
	if !ok {
		route = "" // the catch-all: a path llmrelay does not serve
	}
	return func(w http.ResponseWriter, r *http.Request) {
		r, end := d.o.Tracing.StartHTTPServer(r, route)
		sw := &statusWriter{ResponseWriter: w}
		defer func() { end(sw.status) }()
		h(sw, r)
	}
}

// statusWriter remembers the status a response was written with, for the
// request's span. Unwrap lets http.ResponseController reach the
// connection's writer (its flushes and deadlines).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type door struct{ o Options }

// patternModel is the pattern of one model's path; its id is the rest of
// the path.
const patternModel = "GET /v1/models/{id...}"

// formatOf is the format a request that is not a generation speaks:
// Anthropic's when it carries an anthropic-version header.
func formatOf(r *http.Request) format {
	if r.Header.Get(HeaderAnthropicVersion) != "" {
		return anthropic{}
	}
	return openAI{}
}

// caller describes the HTTP client to the engine: its key, from
// Authorization: Bearer or x-api-key, and its address.
func caller(r *http.Request, method string) engine.Caller {
	c := engine.Caller{Method: method, ForwardedFor: r.Header.Values("X-Forwarded-For")}
	if h := r.Header.Values("Authorization"); len(h) > 0 || len(r.Header.Values("X-Api-Key")) == 0 {
		c.Credential = auth.Bearer(h)
	} else {
		c.Credential = auth.APIKey(r.Header.Values("X-Api-Key"))
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		c.Peer = ap.Addr().Unmap()
	}
	return c
}

// generate serves one generation in format f.
func (d *door) generate(w http.ResponseWriter, r *http.Request, f format) {
	start := time.Now()
	ctx, info := callinfo.NewContext(r.Context())
	info.SetInterface(f.name())
	reply := replyInfo{requestID: info.RequestID(), created: d.o.Now().Unix()}
	eng := d.o.Engine()
	cl := caller(r, llmrelayv1.LLMService_Generate_FullMethodName)
	actx, t, ok := d.authenticated(ctx, w, r, f, start, cl, f.decode, func(fail failure) { newExchange(w, f, reply, false).fail(fail) })
	if !ok {
		return
	}
	// The labels of the call's log line, as the gRPC door records them
	// from the request it received (OpenAI's metadata and user,
	// Anthropic's metadata.user_id).
	info.RecordMetadata(t.req.GetMetadata())
	optIn := r.Header.Get(HeaderMidstream) == MidstreamRestart
	if t.stream && !optIn {
		cannotDiscard(t.req)
	}
	reply.model, reply.includeUsage, reply.extension = t.req.GetModel(), t.includeUsage, t.stream && optIn
	reply.echo = t.echo
	x := newExchange(w, f, reply, t.stream)
	actx, stop := x.clientDeadline(actx, r.Header, start)
	defer stop()
	actx, release, err := eng.Admission().AdmitAuthenticated(actx, cl, t.req)
	if err == nil {
		if t.stream && mayRunServerTools(actx, t.req) {
			x.tools = &toolTurns{}
		}
		// The client's betas go with the call, for the adapters that
		// have them to decide on (provider.WithClientBetas).
		actx = provider.WithClientBetas(actx, t.betas)
		err = d.run(actx, r, release, func() error { return eng.Generate(actx, t.req, x) })
		if err == nil && x.final == nil {
			err = errors.New("the call ended without its final")
		}
	}
	var fail *failure
	if err != nil {
		f := failureOf(err, t.param)
		x.fail(f)
		fail = &f
	}
	d.log(ctx, r, f, start, x.status, fail, err)
}

// authenticated authenticates r's caller cl, then reads r's body and
// decodes it with decode. The caller is authenticated before its body is
// read: one without a valid key learns nothing of what the body should
// be, costs no read or decoding, and is logged with its address's
// failures only. On a failure it answers it with answer (in format f),
// logs it and returns false; else the authenticated context and the
// request.
func (d *door) authenticated(ctx context.Context, w http.ResponseWriter, r *http.Request, f format, start time.Time, cl engine.Caller,
	decode func([]byte, http.Header) (*translated, *failure), answer func(failure)) (context.Context, *translated, bool) {
	actx, err := d.o.Engine().Admission().Auth.Authenticate(ctx, cl)
	if err != nil {
		fail := failureOf(err, nil)
		answer(fail)
		d.log(ctx, r, f, start, fail.status, &fail, err)
		return nil, nil, false
	}
	body, fail := d.readBody(w, r)
	var t *translated
	if fail == nil {
		t, fail = decode(body, r.Header)
	}
	if fail != nil {
		answer(*fail)
		d.log(ctx, r, f, start, fail.status, fail, nil)
		return nil, nil, false
	}
	return actx, t, true
}

// clientDeadline puts the client's deadline, from its HeaderTimeout
// counted from start (clientDeadline), on ctx, as gRPC's transport puts
// grpc-timeout on a call's context, for every call a door admits (a
// generation, a token count); without the header it returns ctx as it is:
// admission's deadline step (engine.Deadlines) decides from it, as from a
// gRPC client's. The SDKs' timeout bounds their wait for the response. A
// reply that is one body (a count's too) comes whole at the call's end,
// so the client's deadline is the call's. A streamed reply's response starts with its stream,
// which the SDKs then read for as long as it lasts (the npm SDKs' fetch
// resolves on the headers; the Python SDKs' read timeout is httpx's, a
// wait between reads), as they would from OpenAI's or Anthropic's API: such
// a call has no bound of the client's (deadlines.max brings it in), and
// ends with DeadlineExceeded at the client's deadline only when its stream
// has not started by
// then, since the client has gone (callctx.WithStartDeadline, on the
// call contexts' shared timer: a held stream keeps no timer of its own).
// stop releases what it set up.
func (x *exchange) clientDeadline(ctx context.Context, h http.Header, start time.Time) (_ context.Context, stop func()) {
	dl, ok := clientDeadline(h, start)
	switch {
	case !ok:
		return ctx, func() {}
	case x.enc == nil:
		return callctx.WithDeadline(ctx, dl)
	}
	return callctx.WithStartDeadline(ctx, dl, x.started.Load)
}

// HeaderTimeout is the request timeout the official SDKs (OpenAI's and
// Anthropic's, generated by Stainless) send, in seconds: how long the SDK
// waits before it gives up on the request, and, by default, sends it again.
const HeaderTimeout = "X-Stainless-Timeout"

// clientDeadline is the deadline a request's HeaderTimeout sets, counted
// from start, when it has a positive number of seconds (the Python SDK
// writes "600.0", the others "600"; an SDK whose timeout is under a
// second, or unset, sends "0" or nothing). A value that does not parse is
// ignored, as no header: the call then gets the server's default.
func clientDeadline(h http.Header, start time.Time) (time.Time, bool) {
	v := h.Get(HeaderTimeout)
	if v == "" {
		return time.Time{}, false
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(secs > 0) || math.IsInf(secs, 0) {
		return time.Time{}, false
	}
	// A timeout longer than Duration holds (292 years) is as good as
	// none: deadlines.max brings it in.
	d := time.Duration(math.MaxInt64)
	if secs < d.Seconds() {
		d = time.Duration(secs * float64(time.Second))
	}
	return start.Add(d), true
}

// run runs an admitted call and releases its admission however it ends. A
// panic below (a bug in llmrelay) is logged with its stack and becomes an
// INTERNAL error, as the gRPC door's recovery makes it: left to net/http,
// it cut the connection, which the SDKs take for a network failure and
// send the call again, and it kept the admission (a key's stream) forever.
func (d *door) run(ctx context.Context, r *http.Request, release func(), call func() error) (err error) {
	defer release()
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			panic(p)
		}
		id := callinfo.From(ctx).RequestID()
		d.o.Logger.ErrorContext(ctx, "panic in call handler", "request_id", id, "http.path", r.URL.Path,
			"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		err = &apierr.Error{Kind: apierr.Internal, Reason: apierr.ReasonInternal,
			Message: "internal error; please report it with request_id " + id, Metadata: map[string]string{"request_id": id}}
	}()
	return call()
}

// mayRunServerTools reports whether a call may run server tools: its
// request names some, or its route's defaults do (read from the call
// record: the engine decides which run).
func mayRunServerTools(ctx context.Context, req *llmrelayv1.GenerateRequest) bool {
	if len(req.GetServerTools()) > 0 {
		return true
	}
	res, ok := callinfo.From(ctx).Resolved()
	return ok && res.Route != nil && len(res.Route.Defaults.ServerTools) > 0
}

// cannotDiscard asks the engine never to replace output a client was
// shown: a failure after output ends the call (retry.midstream FAIL). Its
// structured output, be the schema the request's or its route's default,
// is validated but not re-asked: the exchange tells the engine so
// (exchange.KeepsShownOutput).
func cannotDiscard(req *llmrelayv1.GenerateRequest) {
	if req.Retry == nil {
		req.Retry = &llmrelayv1.RetryPolicy{}
	}
	req.Retry.Midstream = llmrelayv1.Midstream_MIDSTREAM_FAIL
}

// readBody reads a request body, bounded in size and time. A compressed
// body (Content-Encoding other than identity) is refused 415: read as it
// is, it failed as JSON that does not parse.
func (d *door) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *failure) {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		f := requestError("", "the request body's Content-Encoding "+strconv.Quote(ce)+" is not supported: send it uncompressed")
		f.status = http.StatusUnsupportedMediaType
		return nil, &f
	}
	if d.o.BodyTimeout > 0 {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(d.o.BodyTimeout))
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, d.o.MaxBodyBytes))
	if err == nil {
		if at := invalidUTF8(body); at >= 0 {
			// encoding/json would put U+FFFD in its place: the model
			// would be asked something else than the client wrote.
			f := requestError("", "the request body is not valid UTF-8 (at byte "+strconv.Itoa(at)+"): JSON text must be UTF-8")
			return nil, &f
		}
		return body, nil
	}
	var mbe *http.MaxBytesError
	f := requestError("", "the request body could not be read: "+err.Error())
	if errors.As(err, &mbe) {
		f = failure{status: http.StatusRequestEntityTooLarge, reason: engine.ReasonRequestTooLarge,
			message: "the request body is larger than the server's limit of " + strconv.FormatInt(mbe.Limit, 10) + " bytes (limits.max_recv_msg_bytes)"}
	}
	return nil, &f
}

// invalidUTF8 returns the offset of the first byte of b that is not valid
// UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// models serves GET /v1/models, and GET /v1/models/{id}, in the format
// the client speaks. One model is looked up in the list the key may see
// (the engine's ListModels decides which): one it may not use is not
// found, as one that does not exist, so that a key learns nothing of the
// models kept from it.
func (d *door) models(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f := formatOf(r)
	ctx, info := callinfo.NewContext(r.Context())
	info.SetInterface(f.name())
	x := newExchange(w, f, replyInfo{requestID: info.RequestID()}, false)
	eng := d.o.Engine()
	req := &llmrelayv1.ListModelsRequest{}
	id, one := r.PathValue("id"), r.Pattern == patternModel
	actx, release, err := eng.Admission().Admit(ctx, caller(r, llmrelayv1.LLMService_ListModels_FullMethodName), req)
	var body []byte
	var fail *failure
	if err == nil {
		err = d.run(actx, r, release, func() error {
			list, err := eng.ListModels(actx, req)
			switch {
			case err != nil:
			case !one:
				body, err = f.models(list)
			default:
				if m := modelOf(list, id); m != nil {
					body, err = f.model(m)
				} else {
					fail = modelNotFound(id)
				}
			}
			return err
		})
	}
	if err != nil {
		f := failureOf(err, nil)
		fail = &f
	}
	if fail != nil {
		x.fail(*fail)
		d.log(ctx, r, f, start, x.status, fail, err)
		return
	}
	x.reply(body)
	d.log(ctx, r, f, start, x.status, nil, nil)
}

// modelOf returns the model of list whose id is id, or nil.
func modelOf(list *llmrelayv1.ListModelsResponse, id string) *llmrelayv1.Model {
	for _, m := range list.GetModels() {
		if m.GetId() == id {
			return m
		}
	}
	return nil
}

// listExtension is llmrelay's own member of a model list, in either
// format: the providers that accept any model name, which the list's
// data cannot hold, since every id there is one to call.
type listExtension struct {
	AnyModelProviders []anyModelProvider `json:"any_model_providers"`
}

// anyModelProvider is ListModelsResponse's AnyModelProvider.
type anyModelProvider struct {
	Provider     string   `json:"provider"`
	ProviderKind string   `json:"provider_kind"`
	KeyPatterns  []string `json:"key_patterns"`
}

// extensionOf is list's llmrelay member, nil when no provider accepts
// any model name (the list is then exactly the vendor's).
func extensionOf(list *llmrelayv1.ListModelsResponse) *listExtension {
	if len(list.GetAnyModelProviders()) == 0 {
		return nil
	}
	ext := &listExtension{}
	for _, p := range list.GetAnyModelProviders() {
		ext.AnyModelProviders = append(ext.AnyModelProviders, anyModelProvider{
			Provider: p.GetProvider(), ProviderKind: p.GetProviderKind(), KeyPatterns: append([]string{}, p.GetKeyPatterns()...),
		})
	}
	return ext
}

// modelNotFound is the failure of GET /v1/models/{id} for a model the key
// may not see: the same for one that does not exist and one it may not
// use (OpenAI's code model_not_found).
func modelNotFound(id string) *failure {
	return &failure{
		status: http.StatusNotFound, reason: apierr.ReasonUnknownModel,
		message: provider.CleanText("the model "+strconv.Quote(id)+" does not exist or this key may not use it; GET /v1/models lists the models it may use", apierr.MaxMessageBytes),
	}
}

// allowedMethods are the methods of the doors' paths, as an Allow header
// lists them (a GET pattern also serves HEAD).
var allowedMethods = map[string]string{
	"/v1/chat/completions": http.MethodPost,
	"/v1/responses":        http.MethodPost,
	"/v1/messages":         http.MethodPost,
	pathCountTokens:        http.MethodPost,
	pathEmbeddings:         http.MethodPost,
	"/v1/models":           http.MethodGet + ", " + http.MethodHead,
}

// allowedMethodsOf returns the methods a door's path takes (a model's,
// /v1/models/{id}, those of /v1/models).
func allowedMethodsOf(path string) (string, bool) {
	if strings.HasPrefix(path, "/v1/models/") {
		path = "/v1/models"
	}
	allow, ok := allowedMethods[path]
	return allow, ok
}

// pathCountTokens is Anthropic's token counting endpoint (the SDKs'
// messages.count_tokens); it is answered in Anthropic's shape, whatever
// the request's headers (the path is Anthropic's alone).
const pathCountTokens = "/v1/messages/count_tokens"

// countTokens serves POST /v1/messages/count_tokens: the count of the
// input tokens a Messages request would take, {"input_tokens": N}. The
// caller is authenticated as for a generation (the generate scope), and
// the engine admits the count (AdmitCount: the key's rate and model
// access, the request's checks, the model's resolution; no stream slot, no
// budget, no provider slot) and counts it at the first of the model's
// targets whose provider can (engine.CountTokens); a model none of whose
// targets can is TOKEN_COUNTING_NOT_SUPPORTED, 404. An SDK's
// HeaderTimeout is the count's deadline, as a generation's not streamed
// (exchange.clientDeadline). The provider and model that counted are in
// the reply's headers.
func (d *door) countTokens(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f := anthropic{}
	ctx, info := callinfo.NewContext(r.Context())
	info.SetInterface(f.name())
	x := newExchange(w, f, replyInfo{requestID: info.RequestID()}, false)
	eng := d.o.Engine()
	cl := caller(r, llmrelayv1.LLMService_Generate_FullMethodName)
	actx, t, ok := d.authenticated(ctx, w, r, f, start, cl, f.decodeCount, x.fail)
	if !ok {
		return
	}
	actx, stop := x.clientDeadline(actx, r.Header, start)
	defer stop()
	var count engine.TokenCount
	actx, release, err := eng.Admission().AdmitCount(actx, t.req)
	if err == nil {
		actx = provider.WithClientBetas(actx, t.betas)
		err = d.run(actx, r, release, func() (err error) {
			count, err = eng.CountTokens(actx, t.req)
			return err
		})
	}
	if err != nil {
		fail := failureOf(err, t.param)
		x.fail(fail)
		d.log(ctx, r, f, start, x.status, &fail, err)
		return
	}
	w.Header().Set(HeaderProvider, count.Target.Entry.Config.Name)
	w.Header().Set(HeaderModel, count.Target.Model)
	_ = x.reply(f.tokenCount(count.InputTokens))
	d.log(ctx, r, f, start, x.status, nil, nil)
}

// notFound answers any other request, in the format the client speaks: a
// door's path with another method is 405 with the methods it takes in
// Allow, any other path 404. It is counted, with the endpoint
// metrics.EndpointUnknown, so that misdirected traffic shows; it is not
// logged: a flood of such requests would flood the log.
func (d *door) notFound(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f := formatOf(r)
	if r.URL.Path == pathCountTokens {
		f = anthropic{}
	}
	_, info := callinfo.NewContext(r.Context())
	fail := failure{
		status: http.StatusNotFound, reason: "NOT_FOUND",
		message: "llmrelay serves POST /v1/chat/completions, POST /v1/responses, POST /v1/messages, POST /v1/messages/count_tokens, POST /v1/embeddings, GET /v1/models and GET /v1/models/{model}, not " + r.Method + " " + r.URL.Path,
	}
	if allow, ok := allowedMethodsOf(r.URL.Path); ok {
		w.Header().Set("Allow", allow)
		fail.status, fail.reason = http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"
		fail.message = r.URL.Path + " takes " + allow + ", not " + r.Method
	}
	x := newExchange(w, f, replyInfo{requestID: info.RequestID()}, false)
	x.fail(fail)
	d.o.Metrics.HTTPResponse(f.name(), metrics.EndpointUnknown, x.status, time.Since(start))
}

// maxCauseBytes bounds the error.cause of a "finished call" line.
const maxCauseBytes = 4 << 10

// log writes a call's "finished call" line: the call record's fields (as
// the gRPC door's line has them: request id, key, model, route, the
// provider and model that answered, attempts,
// metadata, annotations, usage, turns and server tool calls), the interface, the HTTP status and, for
// a failed call, llmrelay's reason, at the level the gRPC door gives its
// kind of error (a count for a model that cannot count: warn). A call refused at authentication gets none: the engine's
// failed-authentication throttle logs those per client address.
func (d *door) log(ctx context.Context, r *http.Request, f format, start time.Time, status int, fail *failure, err error) {
	_, endpoint, _ := strings.Cut(r.Pattern, " ")
	d.o.Metrics.HTTPResponse(f.name(), endpoint, status, time.Since(start))
	kind, reason := apierr.OK, ""
	if err != nil {
		e := apierr.FromError(err)
		kind, reason = e.Kind, e.Reason
	} else if fail != nil {
		kind = apierr.InvalidArgument
	}
	if kind == apierr.Unauthenticated && !callinfo.From(ctx).PassedAuthentication() {
		return // refused at authentication: the auth throttle logs those
	}
	lvl := slog.Level(logging.DefaultServerCodeToLevel(codes.Code(kind)))
	if reason == engine.ReasonTokenCountingNotSupported {
		// UNIMPLEMENTED, an error when a gRPC client calls a method the
		// server lacks, here answers a count for a model that cannot
		// count: the client falls back to its own estimate (Claude Code
		// asks before every request). A warning, as a model that cannot
		// embed is (FAILED_PRECONDITION), not an error on every request.
		lvl = slog.LevelWarn
	}
	if !d.o.Logger.Enabled(ctx, lvl) {
		return
	}
	ci := callinfo.From(ctx)
	s := ci.Snapshot()
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs, slog.String("request_id", s.RequestID))
	if s.Key != "" {
		attrs = append(attrs, slog.String("key", s.Key))
	}
	if s.Model != "" {
		attrs = append(attrs, slog.String("model", s.Model))
	}
	if s.Route != "" {
		attrs = append(attrs, slog.String("route", s.Route))
	}
	if s.Provider != "" {
		attrs = append(attrs, slog.String("provider", s.Provider), slog.String("served_model", s.ServedModel))
	}
	attempts := s.Attempts
	if fail != nil && attempts == 0 {
		attempts, _ = strconv.Atoi(fail.metadata["attempts"])
	}
	if attempts > 0 {
		attrs = append(attrs, slog.Int("attempts", attempts))
	}
	if md := ci.Metadata(); len(md) > 0 {
		attrs = append(attrs, slog.Any("metadata", callinfo.Labels(md)))
	}
	if notes := ci.Annotations(); len(notes) > 0 {
		attrs = append(attrs, slog.Any("annotations", callinfo.Labels(notes)))
	}
	if u, ok := ci.Usage(); ok {
		attrs = append(attrs, slog.Any("usage", u))
	}
	if s.Turns > 0 {
		attrs = append(attrs, slog.Int("turns", s.Turns))
		if s.ToolCalls > 0 {
			attrs = append(attrs, slog.Int("tool_calls", s.ToolCalls), slog.Int("tool_errors", s.ToolErrors))
		}
	}
	attrs = append(attrs, slog.String("interface", f.name()), slog.String("http.method", r.Method),
		slog.String("http.path", r.URL.Path), slog.Int("http.status", status), slog.String("peer.address", r.RemoteAddr))
	if fail != nil {
		attrs = append(attrs, slog.String("reason", fail.reason), slog.String("error", fail.message))
	}
	if err != nil {
		// The cause may quote the request (a field path with a metadata
		// key): bounded, as the gRPC door's grpc.error is.
		attrs = append(attrs, slog.String("error.cause", provider.CleanText(err.Error(), maxCauseBytes)))
	}
	attrs = append(attrs, slog.Float64("time_ms", float64(time.Since(start).Microseconds())/1000))
	d.o.Logger.LogAttrs(ctx, lvl, "finished call", attrs...)
}
