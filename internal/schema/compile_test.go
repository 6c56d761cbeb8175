package schema

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestCompileRejectsInvalidSchemas(t *testing.T) {
	tests := []struct {
		name, schema, path, message string
	}{
		{"type not a type", `{"type": 12}`, "/type",
			`got 12, want one of "array", "boolean", "integer", "null", "number", "object", "string"; or got number, want array`},
		{"nested unknown type", `{"properties":{"a":{"type":"strin"}}}`, "/properties/a/type",
			`got "strin", want one of "array", "boolean", "integer", "null", "number", "object", "string"; or got string, want array`},
		{"negative minLength", `{"minLength": -1}`, "/minLength", "got -1, want at least 0"},
		{"required not a list", `{"required": "a"}`, "/required", "got string, want array"},
		{"bad regex", `{"properties":{"a":{"pattern":"(("}}}`, "/properties/a/pattern",
			"got \"((\", want format \"regex\""},
		{"draft 7 checked by its own meta-schema", `{"$schema":"http://json-schema.org/draft-07/schema#","maxItems":"3"}`, "/maxItems", "got string, want integer"},
		{"ref to nothing", `{"properties":{"a":{"$ref":"#/$defs/missing"}}}`, "/properties/a/$ref",
			`reference "#/$defs/missing" points to nothing`},
		{"remote ref refused", `{"items":{"$ref":"https://example.com/s.json"}}`, "/items/$ref",
			`cannot resolve "https://example.com/s.json": only references within the schema are allowed`},
		{"file ref refused", `{"$ref":"file:///etc/passwd"}`, "/$ref",
			`cannot resolve "file:///etc/passwd": only references within the schema are allowed`},
		{"unknown meta-schema", `{"$schema":"https://example.com/meta"}`, "/$schema",
			`"https://example.com/meta" is not a JSON Schema draft llmrelay supports; use draft 2020-12 (leave $schema out, or set "https://json-schema.org/draft/2020-12/schema"), 2019-09, 7, 6 or 4`},
		{"draft 3", `{"$schema":"http://json-schema.org/draft-03/schema#"}`, "/$schema",
			`"http://json-schema.org/draft-03/schema" is not a JSON Schema draft llmrelay supports; use draft 2020-12 (leave $schema out, or set "https://json-schema.org/draft/2020-12/schema"), 2019-09, 7, 6 or 4`},
		{"unsupported draft in an embedded resource", `{"$defs":{"a":{"$id":"https://x.test/a","$schema":"https://json-schema.org/draft/2021-01/schema"}}}`, "/$defs/a/$schema",
			`"https://json-schema.org/draft/2021-01/schema" is not a JSON Schema draft llmrelay supports; use draft 2020-12 (leave $schema out, or set "https://json-schema.org/draft/2020-12/schema"), 2019-09, 7, 6 or 4`},
		{"unknown anchor", `{"$ref":"#nope"}`, "/$ref", `reference "#nope" names an anchor that does not exist`},
		{"duplicate id", `{"$id":"https://x.test/a","$defs":{"b":{"$id":"https://x.test/a"}}}`, "/$defs/b/$id",
			`$id "https://x.test/a" is also used at ''`},
		{"not JSON", `{"type":`, "", "not valid JSON: unexpected end of JSON input"},
		{"two values", `{} {}`, "", "not valid JSON: invalid character '{' after top-level value"},
	}
	cache := NewCache(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cache.Compile([]byte(tt.schema))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%s) error = %v, want a *SchemaError", tt.schema, err)
			}
			if se.KeywordPath != tt.path || se.Message != tt.message {
				t.Fatalf("Compile(%s) = %q: %q\nwant %q: %q", tt.schema, se.KeywordPath, se.Message, tt.path, tt.message)
			}
			if !strings.Contains(se.Error(), "'"+tt.path+"'") {
				t.Fatalf("Error() %q does not name the path", se.Error())
			}
		})
	}
}

func TestCompileTooLargeOrTooDeep(t *testing.T) {
	cache := NewCache(Config{MaxSchemaBytes: 64})
	// Whitespace does not count: the limit applies to compact JSON.
	padded := `{  "type" :   "object",` + strings.Repeat(" ", 200) + `"required": ["a"]}`
	if _, err := cache.Compile([]byte(padded)); err != nil {
		t.Fatalf("Compile of a small schema with much whitespace: %v", err)
	}
	big := `{"description":"` + strings.Repeat("x", 64) + `"}`
	_, err := cache.Compile([]byte(big))
	if !errors.Is(err, ErrSchemaTooLarge) || !strings.Contains(err.Error(), "limit is 64") {
		t.Fatalf("Compile of a large schema: %v, want ErrSchemaTooLarge naming the limit", err)
	}

	deep := strings.Repeat(`{"items":`, 120) + `{}` + strings.Repeat(`}`, 120)
	_, err = NewCache(Config{}).Compile([]byte(deep))
	var se *SchemaError
	if !errors.As(err, &se) || !strings.HasPrefix(se.KeywordPath, "/items/items/") {
		t.Fatalf("Compile of a deep schema: %v, want a *SchemaError at the deep keyword", err)
	}
}

func TestCacheReusesAndEvicts(t *testing.T) {
	cache := NewCache(Config{SchemaCacheSize: 2})
	a1, err := cache.Compile([]byte(`{"type":"string","minLength":1}`))
	if err != nil {
		t.Fatal(err)
	}
	// The same schema in another form is the same entry.
	a2, _ := cache.Compile([]byte("{ \"minLength\": 1,\n \"type\": \"string\" }"))
	if a1 != a2 {
		t.Fatal("equal schemas with other formatting compiled twice")
	}
	if got := string(a1.JSON()); got != `{"minLength":1,"type":"string"}` {
		t.Fatalf("JSON() = %s, want canonical JSON", got)
	}
	if len(a1.Key()) != 64 {
		t.Fatalf("Key() = %q, want a hex SHA-256", a1.Key())
	}
	cache.Compile([]byte(`{"type":"number"}`))
	cache.Compile([]byte(`{"type":"string","minLength":1}`)) // a is now the most recent
	cache.Compile([]byte(`{"type":"boolean"}`))              // evicts number
	a3, _ := cache.Compile([]byte(`{"type":"string","minLength":1}`))
	if a3 != a1 {
		t.Fatal("the most recently used schema was evicted")
	}
	st := cache.Stats()
	if st.Entries != 2 || st.Evictions != 1 || st.Hits != 3 || st.Misses != 3 {
		t.Fatalf("Stats() = %+v, want 2 entries, 1 eviction, 3 hits, 3 misses", st)
	}

	// Invalid schemas are remembered as such.
	_, err1 := cache.Compile([]byte(`{"type":12}`))
	_, err2 := cache.Compile([]byte(`{"type":12}`))
	if err1 == nil || err1 != err2 {
		t.Fatalf("invalid schema: %v then %v, want the same cached error", err1, err2)
	}
}

func TestCacheConcurrentUse(t *testing.T) {
	cache := NewCache(Config{SchemaCacheSize: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				src := fmt.Sprintf(`{"type":"object","properties":{"n":{"type":"integer","maximum":%d}},"required":["n"]}`, (g+i)%6)
				s, err := cache.Compile([]byte(src))
				if err != nil {
					t.Error(err)
					return
				}
				if vs, err := s.Validate(t.Context(), map[string]any{"n": "x"}); err != nil || len(vs) != 1 {
					t.Errorf("Validate: %v, %v", vs, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := cache.Stats(); st.Entries > 4 {
		t.Fatalf("cache holds %d entries, bound is 4", st.Entries)
	}
}

func TestAssertFormat(t *testing.T) {
	const src = `{"type":"string","format":"email"}`
	lax, _ := NewCache(Config{}).Compile([]byte(src))
	if _, vs := lax.Check(`"not an email"`); len(vs) != 0 {
		t.Fatalf("format asserted by default: %v", vs)
	}
	strict, _ := NewCache(Config{AssertFormat: true}).Compile([]byte(src))
	_, vs := strict.Check(`"not an email"`)
	if len(vs) != 1 || vs[0].Message != `got "not an email", want format "email"` {
		t.Fatalf("with AssertFormat: %v", vs)
	}
}

// twoOfFive allows 2 re-asks by default and 5 at most.
var twoOfFive = Config{DefaultValidationRetries: 2, MaxValidationRetries: 5}

func TestValidationRetries(t *testing.T) {
	u := func(n uint32) *uint32 { return &n }
	tests := []struct {
		name      string
		cfg       Config
		requested *uint32
		want      int
	}{
		{"unset takes the default", twoOfFive, nil, 2},
		{"zero means never", twoOfFive, u(0), 0},
		{"within the limit", twoOfFive, u(4), 4},
		{"clamped to the limit", twoOfFive, u(10), 5},
		{"default clamped too", Config{DefaultValidationRetries: 3, MaxValidationRetries: 1}, nil, 1},
		{"re-asks forbidden", Config{DefaultValidationRetries: 2}, u(3), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.ValidationRetries(tt.requested); got != tt.want {
				t.Fatalf("ValidationRetries = %d, want %d", got, tt.want)
			}
		})
	}
}

// FuzzCompile compiles arbitrary schemas: Compile answers with a schema or
// a typed error, never a panic, and for every schema it accepts, Instance
// and Lower do not panic and the lowered forms are schemas that compile
// too.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{issueSchema, `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","format":"email"}},"required":["a"]}`, benchSchema, `{"type":12}`, `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#"}}}`,
		`{"anyOf":[{"minimum":1.5,"multipleOf":0.5}],"pattern":"^a+$","minItems":2}`, `true`, `{"items":[{}],"additionalItems":false}`} {
		f.Add(s)
	}
	cache := NewCache(Config{MaxSchemaBytes: 4096})
	f.Fuzz(func(t *testing.T, src string) {
		s, err := cache.Compile([]byte(src))
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) && !errors.Is(err, ErrSchemaTooLarge) {
				t.Fatalf("Compile error %T: %v", err, err)
			}
			return
		}
		text, err := InstanceText(s.JSON())
		if err != nil {
			t.Fatalf("InstanceText: %v", err)
		}
		if _, err := ParseReply(text); err != nil && !strings.Contains(err.Error(), "too large") {
			t.Fatalf("instance %q does not parse: %v", text, err)
		}
		for _, d := range []*Dialect{{Strict: testStrict}, rewriting} {
			l, err := Lower(s.JSON(), d)
			if errors.Is(err, ErrNoNativeForm) {
				continue
			}
			if err != nil {
				t.Fatalf("Lower: %v", err)
			}
			if _, err := NewCache(Config{}).Compile(l.Schema); err != nil {
				t.Fatalf("the lowered form %s of %s does not compile: %v", l.Schema, s.JSON(), err)
			}
		}
	})
}

// TestSupportedDraftsCompile: every draft the unsupported-draft message
// offers is one Compile accepts, with or without a trailing "#".
func TestSupportedDraftsCompile(t *testing.T) {
	cache := NewCache(Config{})
	for _, d := range SupportedDrafts {
		for _, url := range []string{d, strings.TrimSuffix(d, "#")} {
			if _, err := cache.Compile([]byte(`{"$schema":"` + url + `","type":"object"}`)); err != nil {
				t.Errorf("$schema %s: %v", url, err)
			}
		}
	}
}
