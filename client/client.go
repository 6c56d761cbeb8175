// Package client is llmrelay's Go client: a thin layer over the generated
// llmrelay.v1 stub that dials with the right defaults, ranges over a
// Generate stream, and turns failures into typed errors.
//
// Every llmrelay client needs one idiom. Print deltas as they arrive; when a
// will_retry event has discard_partial set, take back what the failed attempt
// showed, because the next attempt streams its reply from the start; and treat
// the final event's message as the answer. [Collect] does exactly that, with
// [Hooks] to show the stream as it goes:
//
//	c, err := client.New("relay.example.com:443", client.WithAPIKey(key))
//	...
//	stream, err := c.Generate(ctx, req)
//	...
//	final, err := client.Collect(stream, &client.Hooks{
//		OnDelta:     func(d *llmrelayv1.Delta) { fmt.Print(d.GetText()) },
//		OnWillRetry: func(w *llmrelayv1.WillRetry, discarded string) { /* erase discarded */ },
//	})
//
// A failed call returns an [*Error] carrying the status's ErrorInfo reason
// and RetryInfo delay as Go values.
//
// [New] dials with [ServiceConfig], which lets gRPC retry ListModels,
// ListTools, Embed, and Generate before its first event, on UNAVAILABLE. Once
// events flow, retries are the server's job and arrive as will_retry
// events.
package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// Client calls an llmrelay server. It is safe for concurrent use.
type Client struct {
	stub llmrelayv1.LLMServiceClient
	// conn is the connection New opened; nil when the caller owns it.
	conn *grpc.ClientConn
	// cc is the connection calls go over, New's or FromConn's, when it
	// is a *grpc.ClientConn: once it is closed, no stream resumes.
	cc *grpc.ClientConn
}

// Option configures New.
type Option func(*options)

type options struct {
	apiKey    string
	tls       *tls.Config
	tlsSet    bool
	plaintext bool
	dial      []grpc.DialOption
}

// WithAPIKey sends key on every call as "authorization: Bearer <key>". The
// key is only sent over TLS, unless WithInsecure says otherwise.
func WithAPIKey(key string) Option { return func(o *options) { o.apiKey = key } }

// WithTLS sets the TLS configuration; nil means the system's root
// certificates, which is also what the client uses without WithTLS (and
// without WithInsecure).
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) { o.tls, o.tlsSet = cfg, true }
}

// WithInsecure dials without TLS, as for a server on loopback. An API key, if
// any, is then sent in the clear.
func WithInsecure() Option { return func(o *options) { o.plaintext = true } }

// WithDialOptions appends gRPC dial options; they apply after New's own, so
// they win where both set the same thing (for example
// grpc.WithDefaultServiceConfig).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dial = append(o.dial, opts...) }
}

// New returns a Client for the server at target (a gRPC target such as
// "host:port" or "dns:///host:port"). It does not wait for the connection:
// calls connect on demand. Close the Client when done.
func New(target string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.plaintext && o.tlsSet {
		return nil, errors.New("llmrelay client: WithTLS and WithInsecure both given")
	}
	dial := []grpc.DialOption{grpc.WithDefaultServiceConfig(ServiceConfig)}
	if o.plaintext {
		dial = append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		cfg := o.tls
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		dial = append(dial, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	}
	if o.apiKey != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearer{key: o.apiKey, requireTLS: !o.plaintext}))
	}
	conn, err := grpc.NewClient(target, append(dial, o.dial...)...)
	if err != nil {
		return nil, fmt.Errorf("llmrelay client: %w", err)
	}
	return &Client{stub: llmrelayv1.NewLLMServiceClient(conn), conn: conn, cc: conn}, nil
}

// FromConn returns a Client over a connection the caller dialled and keeps
// owning: Close does not close it.
func FromConn(conn grpc.ClientConnInterface) *Client {
	cc, _ := conn.(*grpc.ClientConn)
	return &Client{stub: llmrelayv1.NewLLMServiceClient(conn), cc: cc}
}

// Close closes the connection New opened. Calls in progress end with
// CANCELLED; a resumable call is not resumed after it.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Stub returns the generated stub, for calls this package does not wrap.
func (c *Client) Stub() llmrelayv1.LLMServiceClient { return c.stub }

// Conn returns the connection New opened, with its credentials, for the
// server's other services (the admin API's llmrelay.admin.v1 stubs); nil
// for a Client made with FromConn.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Generate starts a Generate call. The returned Stream must be read to its
// end or closed. A call the server refuses before any event fails when the
// stream is read, not here.
//
// A resumable call (req.resumable, or a route that makes calls resumable)
// survives a dropped connection: the Stream picks it up by itself (see
// Stream.Recv). When req asks to be resumable without a request_id,
// Generate gives it a new one (on a copy of req), so that the call can be
// found again; Stream.RequestID returns it.
func (c *Client) Generate(ctx context.Context, req *llmrelayv1.GenerateRequest, opts ...grpc.CallOption) (*Stream, error) {
	if req == nil {
		req = &llmrelayv1.GenerateRequest{} // the server says what it lacks
	}
	if req.GetResumable() && req.GetRequestId() == "" {
		req = proto.CloneOf(req)
		req.RequestId = newRequestID()
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Stream{stub: c.stub, ctx: ctx, cancel: cancel, req: req, opts: opts, requestID: req.GetRequestId(), resumable: req.GetResumable(), closed: c.closed}
	if err := s.open(); err != nil {
		cancel()
		return nil, FromError(err)
	}
	return s, nil
}

// Resume picks up the resumable call requestID after the event numbered
// afterSequence (0: from its first event), as the server's Resume RPC
// does, for a caller that kept a call's id across its own restart, say. The
// returned Stream resumes again by itself when its connection drops.
func (c *Client) Resume(ctx context.Context, requestID string, afterSequence uint64, opts ...grpc.CallOption) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &Stream{stub: c.stub, ctx: ctx, cancel: cancel, opts: opts, requestID: requestID, resumable: true, last: afterSequence, received: true, closed: c.closed}
	if err := s.open(); err != nil {
		cancel()
		return nil, FromError(err)
	}
	return s, nil
}

// listTimeout bounds ListModels and ListTools when the caller's context has
// no deadline, as the TypeScript and Python clients bound theirs: the
// server answers them from what it holds, at once, so a call still
// waiting after this is one whose connection went silent, which must not
// hold its caller for ever.
const listTimeout = 30 * time.Second

// withListTimeout returns ctx with listTimeout as its deadline when it has
// none; a deadline of the caller's, shorter or longer, is kept.
func withListTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, listTimeout)
}

// ListModels lists the models the caller may use. A ctx without a deadline
// gets one of 30s; set one to wait longer. Errors are *Error.
func (c *Client) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest, opts ...grpc.CallOption) (*llmrelayv1.ListModelsResponse, error) {
	ctx, cancel := withListTimeout(ctx)
	defer cancel()
	resp, err := c.stub.ListModels(ctx, req, opts...)
	if err != nil {
		return nil, FromError(err)
	}
	return resp, nil
}

// ListTools lists the server tools the caller may offer a model
// (GenerateRequest.server_tools), with whether each answers right now, and
// the server's MCP servers. A ctx without a deadline gets one of 30s, as
// for ListModels. Errors are *Error.
func (c *Client) ListTools(ctx context.Context, req *llmrelayv1.ListToolsRequest, opts ...grpc.CallOption) (*llmrelayv1.ListToolsResponse, error) {
	ctx, cancel := withListTimeout(ctx)
	defer cancel()
	resp, err := c.stub.ListTools(ctx, req, opts...)
	if err != nil {
		return nil, FromError(err)
	}
	return resp, nil
}

// Embed returns the embeddings of req's inputs, one per input, in order,
// with the provider, model, usage and attempts that answered. gRPC retries
// it on UNAVAILABLE as [ServiceConfig] says. A response holds 4 bytes a
// value, and gRPC receives 4 MiB by default: for more (2048 vectors of
// 1536 values are 12 MiB), pass grpc.MaxCallRecvMsgSize. Errors are
// *Error.
func (c *Client) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest, opts ...grpc.CallOption) (*llmrelayv1.EmbedResponse, error) {
	resp, err := c.stub.Embed(ctx, req, opts...)
	if err != nil {
		return nil, FromError(err)
	}
	return resp, nil
}

// closed reports whether the connection calls go over was closed.
func (c *Client) closed() bool {
	return c.cc != nil && c.cc.GetState() == connectivity.Shutdown
}

// bearer sends an API key as a bearer token.
type bearer struct {
	key        string
	requireTLS bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.key}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.requireTLS }

// newRequestID returns a random (version 4) UUID, the form request_id
// takes.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
