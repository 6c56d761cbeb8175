package httpx

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// Encoded is a provider request ready to send: its JSON body, with the
// request's provider_options merged in, and the extra headers they ask for.
type Encoded struct {
	Body []byte
	// Header holds the extra headers; nil for none.
	Header http.Header
}

// Owned maps the paths of the body fields an adapter sets from the
// request itself to the request field that sets them ("" when none does:
// the adapter's own, such as "stream"). A path names a top-level key, or a
// key of a nested object with dots ("output_config.format").
// provider_options may not set them.
type Owned map[string]string

// ExtraHeadersKey is the provider_options key whose value, an object of
// header names to strings, adds HTTP headers to the request instead of body
// fields. A header the provider's configuration sets is kept: see
// provider.Config.CheckOptions and Endpoint.Stream.
const ExtraHeadersKey = provider.ExtraHeadersKey

// MaxExtraHeaders bounds the headers extra_headers may add.
const MaxExtraHeaders = 32

// EncodeRequest builds an adapter's wire request with build and encodes it
// with the request's provider_options merged in (see Encode). A request
// build refuses is build's error, unchanged. Like Encode, it runs on
// offstack's workers, build included.
func EncodeRequest[T any](req *provider.Request, build func(*provider.Request) (T, error), owned Owned) (enc Encoded, err error) {
	offstack.Run(func() {
		var body T
		if body, err = build(req); err == nil {
			enc, err = encode(body, req.Options, owned)
		}
	})
	return enc, err
}

// Prepared returns the wire request of req that the adapter's
// PrepareRequest built (provider.Request.Prepared), if it has one.
func Prepared(req *provider.Request) (Encoded, bool) {
	enc, ok := req.Prepared.(Encoded)
	return enc, ok
}

// Encode encodes body as JSON and merges opts, the request's
// provider_options, into it: every top-level key is added to the body;
// where the body already has the key, an object is merged into an object
// key by key (recursively, as Gemini's generationConfig needs), anything
// else is refused, since llmrelay set that field from the request. A path
// that owned lists is refused even when the body does not have it.
// extra_headers gives Encoded.Header (see ExtraHeaderProblem). Every refusal
// is a *provider.FieldError naming the option's path,
// "provider_options.<key>[.<key>...]". Without options the body is
// json.Marshal's; with them its keys are sorted.
//
// The encoding runs on offstack's workers: encoding/json's recursion into
// a request's messages and blocks needs several KiB of stack, which an
// open stream's goroutine would otherwise keep for as long as it streams
// (see package offstack). It must not be called from offstack's work.
func Encode(body any, opts map[string]any, owned Owned) (enc Encoded, err error) {
	offstack.Run(func() { enc, err = encode(body, opts, owned) })
	return enc, err
}

// encode is Encode on the caller's goroutine.
func encode(body any, opts map[string]any, owned Owned) (Encoded, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return Encoded{}, fmt.Errorf("httpx: encoding the request: %w", err)
	}
	if len(opts) == 0 {
		return Encoded{Body: b}, nil
	}
	var enc Encoded
	fields := make(map[string]any, len(opts))
	for k, v := range opts {
		if k == ExtraHeadersKey {
			if enc.Header, err = extraHeaders(v); err != nil {
				return Encoded{}, err
			}
			continue
		}
		fields[k] = v
	}
	if len(fields) == 0 {
		enc.Body = b
		return enc, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return Encoded{}, fmt.Errorf("httpx: the request body is not a JSON object: %w", err)
	}
	if err := merge(doc, fields, "", owned); err != nil {
		return Encoded{}, err
	}
	if enc.Body, err = json.Marshal(doc); err != nil {
		return Encoded{}, fmt.Errorf("httpx: encoding the request: %w", err)
	}
	return enc, nil
}

// merge adds opts to doc, the object at path prefix (with its trailing
// dot), as Encode describes.
func merge(doc map[string]json.RawMessage, opts map[string]any, prefix string, owned Owned) error {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path, v := prefix+k, opts[k]
		if from, ok := owned[path]; ok {
			return optionErr(path, ownedDescription(from))
		}
		sub, isObject := v.(map[string]any)
		cur, exists := doc[k]
		inner := map[string]json.RawMessage{}
		switch {
		case exists && isObject && json.Unmarshal(cur, &inner) == nil && inner != nil:
		case exists:
			return optionErr(path, "llmrelay already sets this field from the request's own fields (generation, tools, tool_choice, response_format, messages); set it there")
		case ownsUnder(owned, path) && !isObject:
			return optionErr(path, "must be an object: llmrelay sets some of its fields from the request")
		case !isObject || !ownsUnder(owned, path):
			raw, err := json.Marshal(v)
			if err != nil {
				return optionErr(path, "is not JSON: "+err.Error())
			}
			doc[k] = raw
			continue
		}
		if err := merge(inner, sub, path+".", owned); err != nil {
			return err
		}
		raw, err := json.Marshal(inner)
		if err != nil {
			return optionErr(path, "is not JSON: "+err.Error())
		}
		doc[k] = raw
	}
	return nil
}

// ownsUnder reports whether owned lists a path inside the object at path.
func ownsUnder(owned Owned, path string) bool {
	for p := range owned {
		if strings.HasPrefix(p, path+".") {
			return true
		}
	}
	return false
}

func ownedDescription(from string) string {
	if from == "" {
		return "llmrelay sets this field itself; it cannot be set through provider_options"
	}
	return "llmrelay sets this field from the request's " + from + "; set that instead"
}

func optionErr(path, desc string) error {
	return &provider.FieldError{Field: "provider_options." + path, Description: desc}
}

// framingHeaders are the headers the request's connection and framing
// decide, which the HTTP client owns: neither a provider's configured
// headers nor extra_headers may set them.
var framingHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"}

// billingHeaders choose which of the accounts a provider key belongs to
// is billed (and whose quota, data and rate limits apply): OpenAI's
// organization and project (sent by OpenAI-compatible servers too), and
// Google's quota project. They are the operator's, like the key itself: a
// tenant naming another organization of a key shared by several would
// bill it. The operator sets them in the provider's `headers`, which
// extra_headers cannot replace anyway (provider.Config.CheckOptions).
// Anthropic and Azure OpenAI have no such header: the key (Azure's api-key,
// a credential below) alone decides the workspace or resource billed.
var billingHeaders = []string{"Openai-Organization", "Openai-Project", "X-Goog-User-Project"}

// credentialHeaders carry a credential that is not named as one
// (credential says which are): Azure OpenAI's api-key, Kong's apikey,
// Helicone's, AWS's session token and cookies.
var credentialHeaders = []string{"Api-Key", "Apikey", "Helicone-Auth", "X-Amz-Security-Token", "Cookie"}

// credential reports whether the header named canonical carries a
// credential: the provider's key is the server's, and so is the key of a
// gateway in front of it, which decides who calls and who pays as much.
// Besides credentialHeaders, a name that says so is one: any *-Api-Key
// (Anthropic's x-api-key, Google's x-goog-api-key, LiteLLM's, Portkey's),
// *-Subscription-Key (Azure API Management's Ocp-Apim-Subscription-Key)
// and any name with Authorization in it (Authorization, Proxy-,
// Cloudflare AI Gateway's cf-aig-, Azure's x-ms-authorization-auxiliary).
func credential(canonical string) bool {
	return slices.Contains(credentialHeaders, canonical) ||
		strings.HasSuffix(canonical, "-Api-Key") || strings.HasSuffix(canonical, "-Subscription-Key") ||
		strings.Contains(canonical, "Authorization")
}

// forbiddenHeaders are the headers other than credentials that
// extra_headers may not set: the headers that choose the account billed
// (billingHeaders), the body's encoding and what it accepts, and the
// framing.
var forbiddenHeaders = slices.Concat([]string{
	"Content-Type", "Content-Encoding", "Accept", "Accept-Encoding", "Expect",
}, billingHeaders, framingHeaders)

// ExtraHeaderProblem says what is wrong with one header of extra_headers,
// or returns "": its name must be a valid header name that is not a
// credential (Authorization, x-api-key, Ocp-Apim-Subscription-Key, ...:
// see credential) nor one of the billing-account or framing headers the
// server owns (OpenAI-Organization, OpenAI-Project, X-Goog-User-Project,
// Host, Content-Type, ...; any Proxy-*), its value a valid header value.
func ExtraHeaderProblem(name, value string) string {
	canonical := http.CanonicalHeaderKey(name)
	switch {
	case !httpguts.ValidHeaderFieldName(name):
		return "is not a valid header name"
	case credential(canonical):
		return "cannot be set: credentials are the server's (the provider's key, and a gateway's in the provider's configured headers)"
	case slices.Contains(forbiddenHeaders, canonical) || strings.HasPrefix(canonical, "Proxy-"):
		return "cannot be set: llmrelay sets this header itself (the account billed and framing are the server's)"
	case !httpguts.ValidHeaderFieldValue(value):
		return "has a value that is not a valid header value"
	}
	return ""
}

// extraHeaders reads extra_headers.
func extraHeaders(v any) (http.Header, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, optionErr(ExtraHeadersKey, `must be an object of header names to strings, such as {"anthropic-beta": "interleaved-thinking-2025-05-14"}`)
	}
	if len(obj) > MaxExtraHeaders {
		return nil, optionErr(ExtraHeadersKey, fmt.Sprintf("has %d headers; at most %d", len(obj), MaxExtraHeaders))
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	h := make(http.Header, len(obj))
	for _, name := range names {
		value, ok := obj[name].(string)
		if !ok {
			return nil, optionErr(ExtraHeadersKey+"."+name, "must be a string")
		}
		if problem := ExtraHeaderProblem(name, value); problem != "" {
			return nil, optionErr(ExtraHeadersKey+"."+name, problem)
		}
		h.Set(name, value)
	}
	return h, nil
}
