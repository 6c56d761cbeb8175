package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// EndpointOptions are what one provider kind says about its HTTP API.
type EndpointOptions struct {
	// DefaultBaseURL is used when the configuration has no base_url.
	DefaultBaseURL string
	// KeyRequired makes a missing api_key_env an error.
	KeyRequired bool
	// Header holds the kind's fixed headers (for example anthropic-version);
	// the configuration's headers may replace them.
	Header map[string]string
	// Auth sets the API key on a request's headers; it is not called when
	// there is no key.
	Auth func(h http.Header, key string)
	// Extra names a non-standard line field the kind's streams may carry as
	// an event (see GetReader); empty for none.
	Extra string
}

// Endpoint is what every HTTP adapter holds for one configured provider:
// its base URL, API key, headers and timeout, and its client (see
// NewClient). It is safe for concurrent use.
type Endpoint struct {
	// BaseURL is the configured base_url without trailing slashes, or the
	// kind's default.
	BaseURL string

	key    Secret
	header http.Header
	// operator holds the canonical names of the configuration's headers,
	// which a request's extra headers never replace.
	operator map[string]bool
	// secrets are what an upstream's error must not carry onward (see
	// redact): the key and the words of the configuration's header values.
	secrets []Secret
	// redactFn is redact, for the requests; nil without secrets.
	redactFn func(string) string
	timeout  time.Duration
	client   *http.Client
	auth     func(h http.Header, key string)
	extra    string
}

// NewEndpoint reads a provider's configuration: the base URL (validated),
// the API key from the environment (see APIKey), the headers, the
// timeout, the transport settings and the redirect policy.
func NewEndpoint(cfg provider.Config, o EndpointOptions) (*Endpoint, error) {
	key, err := APIKey(cfg, o.KeyRequired)
	if err != nil {
		return nil, err
	}
	base, err := BaseURL(cfg, o.DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	if err := checkHeaders(cfg.Headers); err != nil {
		return nil, err
	}
	client, err := NewClient(cfg.Transport, cfg.Redirects)
	if err != nil {
		return nil, err
	}
	ep := &Endpoint{
		BaseURL:  base,
		key:      key,
		header:   StaticHeader(cfg, o.Header),
		operator: make(map[string]bool, len(cfg.Headers)),
		timeout:  cfg.Timeout,
		client:   client,
		auth:     o.Auth,
		extra:    o.Extra,
	}
	if !key.IsZero() {
		ep.secrets = append(ep.secrets, key)
	}
	for k, v := range cfg.Headers {
		ep.operator[http.CanonicalHeaderKey(k)] = true
		for _, w := range strings.Fields(v) {
			if len(w) >= minSecretLen {
				ep.secrets = append(ep.secrets, Secret{p: &w})
			}
		}
	}
	if len(ep.secrets) > 0 {
		ep.redactFn = ep.redact
	}
	release(ep, client)
	return ep, nil
}

// Call is one attempt's HTTP call.
type Call struct {
	// URL is the endpoint's URL.
	URL string
	// Body is the request, encoded (Encode).
	Body Encoded
	// Header holds headers the adapter sets for this call alone. They
	// replace the endpoint's, the configuration's included: an adapter that
	// adds to a configured header (anthropic's betas) sends its whole value.
	Header http.Header
	// Activity, when not nil, is touched for every read of the response
	// body that returned bytes (see provider.Activity).
	Activity *provider.Activity
	// Decoder decodes the response's events.
	Decoder Decoder
	// Parse reads the provider's error bodies.
	Parse ErrorBodyParser
}

// Stream starts one attempt: it POSTs c.Body to c.URL with the endpoint's
// headers, the body's extra headers (but for those the configuration sets:
// the operator's value is sent), c.Header and the key, and returns the
// provider.Stream that decodes the response with c.Decoder, or the
// attempt's error (see Provider.Stream).
func (e *Endpoint) Stream(ctx context.Context, c Call) (provider.Stream, error) {
	s, err := open(ctx, e.client, request{url: c.URL, header: e.headers(c), body: c.Body.Body, timeout: e.timeout, extra: e.extra, activity: c.Activity, redact: e.redactFn}, c.Decoder, c.Parse)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// headers returns the headers of call c: the endpoint's, the body's extra
// headers (but for those the configuration sets), c.Header and the key.
func (e *Endpoint) headers(c Call) http.Header {
	h := e.header.Clone()
	for k, v := range c.Body.Header {
		if !e.operator[k] {
			h[k] = v
		}
	}
	for k, v := range c.Header {
		h[k] = v
	}
	if !e.key.IsZero() && e.auth != nil {
		e.auth(h, e.key.Reveal())
	}
	return h
}

// MaxReplyBody bounds the body of a reply Post reads.
const MaxReplyBody = 1 << 20

// Post sends a request the provider answers with one JSON document, not
// a stream (Anthropic's token counting): it POSTs c.Body to c.URL with
// the headers Stream sends, within the provider's timeout, and returns the
// 2xx response's body. Its errors are Stream's: a non-2xx status is a
// KindHTTP *provider.Error read by c.Parse (redacted as Stream's are); a
// failure to send or to read the body, or a timeout, is KindTransport; a
// body longer than MaxReplyBody is KindProtocol; ctx's end returns ctx's
// error. c.Activity and c.Decoder are not used.
func (e *Endpoint) Post(ctx context.Context, c Call) ([]byte, error) {
	var body []byte
	err := e.post(ctx, c, func(status int, r io.Reader) error {
		var err error
		body, err = io.ReadAll(io.LimitReader(r, MaxReplyBody+1))
		switch {
		case err != nil:
			return err
		case len(body) > MaxReplyBody:
			return &provider.Error{Kind: provider.KindProtocol, Class: provider.ClassProtocol, Status: status,
				Message: "answered with a body larger than " + strconv.Itoa(MaxReplyBody) + " bytes"}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return body, nil
}

// PostRead is Post for a document too large to hold (an embeddings
// reply): instead of returning the 2xx response's body, it hands it to
// read as it arrives and closes it when read returns. An error of read is
// PostRead's error, the adapter's to make (a KindProtocol *provider.Error
// for a document that does not decode), unless reading the body failed,
// or the provider's timeout or ctx ended the attempt, which give the
// errors Post gives. Post's other errors are PostRead's before read is
// called.
func (e *Endpoint) PostRead(ctx context.Context, c Call, read func(body io.Reader) error) error {
	return e.post(ctx, c, func(_ int, body io.Reader) error { return read(body) })
}

// post is PostRead, read getting the response's status too.
func (e *Endpoint) post(ctx context.Context, c Call, read func(status int, body io.Reader) error) error {
	attempt, cancel := context.WithCancel(ctx)
	if e.timeout > 0 {
		attempt, cancel = context.WithTimeoutCause(ctx, e.timeout, ErrAttemptTimeout)
	}
	defer cancel()
	hr, err := http.NewRequestWithContext(attempt, http.MethodPost, c.URL, bytes.NewReader(c.Body.Body))
	if err != nil {
		return fmt.Errorf("httpx: building the request: %w", err)
	}
	hr.Header = e.headers(c)
	if trace.SpanContextFromContext(ctx).IsValid() {
		telemetry.UpstreamPropagator.Inject(ctx, propagation.HeaderCarrier(hr.Header))
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	resp, err := send(e.client, hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = loggableURL(ue.URL)
		}
		return failure(ctx, attempt, "sending the request failed", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		pe := ResponseError(resp, time.Now(), redacting(c.Parse, e.redactFn))
		redactError(pe, e.redactFn)
		return pe
	}
	body := &failedRead{r: resp.Body}
	err = read(resp.StatusCode, body)
	_ = resp.Body.Close()
	switch {
	case body.err != nil:
		return failure(ctx, attempt, "reading the response failed", body.err)
	case err != nil && attempt.Err() != nil:
		return failure(ctx, attempt, "reading the response failed", err)
	}
	return err
}

// failedRead is a reader that keeps the error of its reader's first read
// that failed (but for io.EOF).
type failedRead struct {
	r   io.Reader
	err error
}

func (f *failedRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

// minSecretLen is the length from which a word of a configured header's
// value is taken for a credential (see redact): shorter ones ("Bearer",
// a version) are no secret, and replacing them would garble messages.
const minSecretLen = 8

// redact returns s with every credential the endpoint sends (its key, the
// words of the configuration's header values) replaced by "[redacted]". An
// upstream's error may quote what it was sent ("Incorrect API key
// provided: sk-..."); its message reaches clients (a rejected request's)
// and the log, its body the debug log.
func (e *Endpoint) redact(s string) string {
	for _, sec := range e.secrets {
		if v := sec.Reveal(); v != "" && strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}
