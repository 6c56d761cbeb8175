package schema

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrSchemaTooLarge is returned (wrapped, with the sizes) by Cache.Compile
// for a schema larger than Config.MaxSchemaBytes.
var ErrSchemaTooLarge = errors.New("JSON Schema too large")

// SchemaError says that a request's JSON Schema is invalid. Its message is
// safe to show to the client.
type SchemaError struct {
	// KeywordPath is a JSON pointer into the schema to the offending
	// keyword, e.g. "/type" or "/properties/score/minimum"; "" for the
	// schema as a whole.
	KeywordPath string
	// Message says what is wrong.
	Message string
}

// Error implements error.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("invalid JSON Schema at %s: %s", quoteLocation(e.KeywordPath), e.Message)
}

// maxSchemaDepth bounds how deeply a schema's JSON may nest.
const maxSchemaDepth = 100

// resourceURL is the location every schema is compiled at. It never leaves
// the package: messages name JSON pointers instead.
const resourceURL = "mem:///schema.json"

// Schema is a compiled JSON Schema. It is immutable and safe for concurrent
// use.
type Schema struct {
	key      string
	json     []byte
	compiled *jsonschema.Schema
	// budget bounds the work of a check; analysis says what its
	// subschemas cost (see budget.go).
	budget   int
	analysis *analysis
}

// Admit returns a *SchemaError when s is compiled but replies cannot be
// checked against it within the validation budget whatever they are: a
// subschema whose $ref, anyOf, oneOf and allOf apply so many subschemas
// to the same value that any value spends more than the budget (the error
// names the one where the fan-out passes it), a subschema that applies
// itself to the same value again (a reference cycle, which the validator
// fails whatever the value), or a $dynamicRef or $recursiveRef resolved in
// the dynamic scope, which the budget's walk does not follow. A request
// with such a schema is refused before any provider call. nil when s is
// admitted.
func (s *Schema) Admit() error {
	if s.analysis.refusal != nil {
		return s.analysis.refusal
	}
	return nil
}

// Key returns the hex SHA-256 of the schema's canonical JSON: equal schemas
// have equal keys whatever their formatting and key order.
func (s *Schema) Key() string { return s.key }

// JSON returns the schema as canonical JSON (compact, object keys sorted):
// what provider adapters receive in provider.ResponseFormat.Schema. The
// caller must not modify it.
func (s *Schema) JSON() json.RawMessage { return s.json }

// Cache compiles schemas and keeps the compiled ones, keyed by the SHA-256
// of their canonical JSON, dropping the least recently used beyond
// Config.SchemaCacheSize. Invalid schemas are remembered too, so a client that
// repeats one does not cost a compile each time. Safe for concurrent use.
type Cache struct {
	cfg Config

	mu     sync.Mutex
	lru    *list.List // of *cacheEntry, most recent first
	byHash map[[sha256.Size]byte]*list.Element
	stats  CacheStats
}

type cacheEntry struct {
	hash   [sha256.Size]byte
	schema *Schema
	err    error
}

// CacheStats counts what a Cache did.
type CacheStats struct {
	Hits, Misses, Evictions uint64
	Entries                 int
}

// NewCache returns an empty cache configured by cfg.
func NewCache(cfg Config) *Cache {
	return &Cache{
		cfg:    cfg,
		lru:    list.New(),
		byHash: make(map[[sha256.Size]byte]*list.Element),
	}
}

// Compile returns the compiled form of the JSON Schema in raw (draft 2020-12
// unless its $schema names another draft). It fails with an error wrapping
// ErrSchemaTooLarge when the schema's compact JSON exceeds
// Config.MaxSchemaBytes, and with a *SchemaError when the schema is not
// valid JSON or not a valid schema. References may only point inside the
// schema: nothing is ever loaded from the network or the file system.
func (c *Cache) Compile(raw []byte) (*Schema, error) {
	doc, canon, err := canonicalize(raw, c.cfg.MaxSchemaBytes)
	if err != nil {
		return nil, err
	}
	hash := sha256.Sum256(canon)

	c.mu.Lock()
	if el, ok := c.byHash[hash]; ok {
		c.lru.MoveToFront(el)
		c.stats.Hits++
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		return e.schema, e.err
	}
	c.stats.Misses++
	c.mu.Unlock()

	// Compile outside the lock: two callers racing on a new schema both
	// compile it, and the first to finish wins the slot.
	s, err := compile(doc, canon, hash, c.cfg)

	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byHash[hash]; ok {
		e := el.Value.(*cacheEntry)
		return e.schema, e.err
	}
	c.byHash[hash] = c.lru.PushFront(&cacheEntry{hash: hash, schema: s, err: err})
	for c.cfg.SchemaCacheSize > 0 && c.lru.Len() > c.cfg.SchemaCacheSize {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.byHash, old.Value.(*cacheEntry).hash)
		c.stats.Evictions++
	}
	return s, err
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Entries = c.lru.Len()
	return st
}

// canonicalize checks raw's size and depth and returns it decoded and as
// canonical JSON: compact, object keys sorted, numbers as written.
func canonicalize(raw []byte, limit int) (any, []byte, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, nil, &SchemaError{Message: "not valid JSON: " + jsonErrorText(err)}
	}
	if limit > 0 && compact.Len() > limit {
		return nil, nil, fmt.Errorf("%w: %d bytes as compact JSON, the limit is %d", ErrSchemaTooLarge, compact.Len(), limit)
	}
	doc, err := decodeJSON(compact.Bytes())
	if err != nil {
		return nil, nil, &SchemaError{Message: "not valid JSON: " + jsonErrorText(err)}
	}
	if p, deep := tooDeep(doc, "", 0); deep {
		return nil, nil, &SchemaError{KeywordPath: p, Message: fmt.Sprintf("nested more than %d levels deep", maxSchemaDepth)}
	}
	canon, err := marshalJSON(doc)
	if err != nil {
		return nil, nil, &SchemaError{Message: "not valid JSON: " + err.Error()}
	}
	return doc, canon, nil
}

// decodeJSON decodes one JSON value, keeping numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// marshalJSON encodes v compactly with sorted object keys and without
// escaping <, > and &.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// tooDeep reports the first place where v nests deeper than maxSchemaDepth.
func tooDeep(v any, at string, depth int) (string, bool) {
	if depth > maxSchemaDepth {
		return at, true
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if p, deep := tooDeep(e, pointer(at, k), depth+1); deep {
				return p, true
			}
		}
	case []any:
		for i, e := range v {
			if p, deep := tooDeep(e, pointerIndex(at, i), depth+1); deep {
				return p, true
			}
		}
	}
	return "", false
}

// refusingLoader is the compiler's URL loader: it loads nothing, so a
// schema can only refer to itself and to the bundled meta-schemas.
type refusingLoader struct{}

var errRemoteRef = errors.New("only references within the schema are allowed")

func (refusingLoader) Load(string) (any, error) { return nil, errRemoteRef }

func compile(doc any, canon []byte, hash [sha256.Size]byte, cfg Config) (*Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	if cfg.AssertFormat {
		c.AssertFormat()
	}
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, schemaError(err, doc)
	}
	compiled, err := c.Compile(resourceURL)
	if err != nil {
		return nil, schemaError(err, doc)
	}
	budget := cfg.validationBudget()
	return &Schema{key: hex.EncodeToString(hash[:]), json: canon, compiled: compiled, budget: budget, analysis: analyze(compiled, budget)}, nil
}

// schemaError turns the compiler's error into a *SchemaError that names the
// offending keyword.
func schemaError(err error, doc any) *SchemaError {
	var (
		invalid    *jsonschema.SchemaValidationError
		load       *jsonschema.LoadURLError
		notFound   *jsonschema.JSONPointerNotFoundError
		badPointer *jsonschema.InvalidJsonPointerError
		noAnchor   *jsonschema.AnchorNotFoundError
		badRegex   *jsonschema.InvalidRegexError
		dupID      *jsonschema.DuplicateIDError
		dupAnchor  *jsonschema.DuplicateAnchorError
		badID      *jsonschema.ParseIDError
		badAnchor  *jsonschema.ParseAnchorError
		draft      *jsonschema.UnsupportedDraftError
		vocab      *jsonschema.UnsupportedVocabularyError
	)
	switch {
	case errors.As(err, &invalid):
		var verr *jsonschema.ValidationError
		if errors.As(invalid.Err, &verr) {
			if vs := flatten(verr); len(vs) > 0 {
				return &SchemaError{KeywordPath: vs[0].InstanceLocation, Message: messagesAt(vs, vs[0].InstanceLocation)}
			}
		}
	case errors.As(err, &load):
		ref := internalURL(load.URL)
		at := findRef(doc, ref)
		if strings.HasSuffix(at, "/$schema") {
			// The compiler loads a $schema it does not know as a remote
			// meta-schema; to the author it is a draft llmrelay lacks.
			return &SchemaError{KeywordPath: at, Message: unsupportedDraft(ref)}
		}
		return &SchemaError{KeywordPath: at, Message: fmt.Sprintf("cannot resolve %q: %v", ref, errRemoteRef)}
	case errors.As(err, &notFound):
		ref := internalURL(notFound.URL)
		return &SchemaError{KeywordPath: findRef(doc, ref), Message: fmt.Sprintf("reference %q points to nothing", ref)}
	case errors.As(err, &badPointer):
		ref := internalURL(badPointer.URL)
		return &SchemaError{KeywordPath: findRef(doc, ref), Message: fmt.Sprintf("reference %q is not a valid JSON pointer", ref)}
	case errors.As(err, &noAnchor):
		ref := internalURL(noAnchor.Reference)
		return &SchemaError{KeywordPath: findRef(doc, ref), Message: fmt.Sprintf("reference %q names an anchor that does not exist", ref)}
	case errors.As(err, &badRegex):
		return &SchemaError{KeywordPath: fragmentPointer(badRegex.URL), Message: fmt.Sprintf("%q is not a valid regular expression", badRegex.Regex)}
	case errors.As(err, &dupID):
		first, second := minmax(dupID.Ptr1, dupID.Ptr2)
		return &SchemaError{KeywordPath: pointer(second, "$id"), Message: fmt.Sprintf("$id %q is also used at %s", dupID.ID, quoteLocation(first))}
	case errors.As(err, &dupAnchor):
		first, second := minmax(dupAnchor.Ptr1, dupAnchor.Ptr2)
		return &SchemaError{KeywordPath: pointer(second, "$anchor"), Message: fmt.Sprintf("anchor %q is also defined at %s", dupAnchor.Anchor, quoteLocation(first))}
	case errors.As(err, &badID):
		return &SchemaError{KeywordPath: pointer(fragmentPointer(badID.URL), "$id"), Message: "not a valid URI reference"}
	case errors.As(err, &badAnchor):
		return &SchemaError{KeywordPath: fragmentPointer(badAnchor.URL), Message: "not a valid anchor"}
	case errors.As(err, &draft):
		return &SchemaError{KeywordPath: "/$schema", Message: unsupportedDraft(internalURL(draft.URL))}
	case errors.As(err, &vocab):
		return &SchemaError{KeywordPath: "/$vocabulary", Message: fmt.Sprintf("unsupported vocabulary %q", vocab.Vocabulary)}
	}
	return &SchemaError{Message: internalURL(err.Error())}
}

// SupportedDrafts lists, newest first, the $schema values llmrelay
// compiles (with or without a trailing "#"; draft 2020-12 when $schema is
// left out).
var SupportedDrafts = []string{
	"https://json-schema.org/draft/2020-12/schema",
	"https://json-schema.org/draft/2019-09/schema",
	"http://json-schema.org/draft-07/schema#",
	"http://json-schema.org/draft-06/schema#",
	"http://json-schema.org/draft-04/schema#",
}

// unsupportedDraft says that $schema names a draft (or meta-schema) that
// llmrelay cannot compile against, and which ones it can.
func unsupportedDraft(url string) string {
	return fmt.Sprintf("%q is not a JSON Schema draft llmrelay supports; use draft 2020-12 (leave $schema out, or set %q), "+
		"2019-09, 7, 6 or 4", url, SupportedDrafts[0])
}

// minmax returns a and b in order, so that of two places the library may
// report in either order, the later one is always named as the offender.
func minmax(a, b string) (string, string) { return min(a, b), max(a, b) }

// internalURL removes the package's resource URL from s, leaving the
// fragment ("#/$defs/a") that the client wrote.
func internalURL(s string) string { return strings.ReplaceAll(s, resourceURL, "") }

// findRef returns the location of the first $ref, $dynamicRef or $schema in
// doc whose value is ref, or "" when there is none.
func findRef(doc any, ref string) string {
	p, _ := findJSON(doc, "", func(v any, at string) (string, bool) {
		m, _ := v.(map[string]any)
		for _, kw := range []string{"$ref", "$dynamicRef", "$schema"} {
			if s, ok := m[kw].(string); ok && (s == ref || strings.TrimSuffix(s, "#") == strings.TrimSuffix(ref, "#")) {
				return pointer(at, kw), true
			}
		}
		return "", false
	})
	return p
}

// findJSON visits v and everything in it, object members in key order, and
// returns the first location that match reports.
func findJSON(v any, at string, match func(v any, at string) (string, bool)) (string, bool) {
	if p, ok := match(v, at); ok {
		return p, true
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if p, ok := findJSON(v[k], pointer(at, k), match); ok {
				return p, true
			}
		}
	case []any:
		for i, e := range v {
			if p, ok := findJSON(e, pointerIndex(at, i), match); ok {
				return p, true
			}
		}
	}
	return "", false
}
