package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fanOut is the schema of the review that found the blow-up: $defs that
// each apply the next one twice under kw, 2^(n+1) evaluations of a value
// that fails them.
func fanOut(kw string, n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{%q:[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, kw, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, n))
	return `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/d0"}`
}

// TestFanOutIsRefusedBeforeAnyReply: a schema that applies so many
// subschemas to one value that no value can be checked within the budget
// compiles (it is a valid schema) but is not admitted, with an error that
// names the subschema where the fan-out passes the budget; a small fan-out
// is admitted and its replies are checked.
func TestFanOutIsRefusedBeforeAnyReply(t *testing.T) {
	cache := NewCache(Config{MaxSchemaBytes: 64 << 10})
	for _, tc := range []struct {
		name, schema string
		refused      bool
	}{
		{"anyOf, n=30 (the review's, 1,947 bytes)", fanOut("anyOf", 30), true},
		{"oneOf, n=24", fanOut("oneOf", 24), true},
		{"allOf, n=20", fanOut("allOf", 20), true},
		{"anyOf, n=6", fanOut("anyOf", 6), false},
		{"a recursive tree, which applies itself to inner values only",
			`{"$defs":{"n":{"anyOf":[{"type":"string"},{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/n"}}]}},"$ref":"#/$defs/n"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := cache.Compile([]byte(tc.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			err = s.Admit()
			var se *SchemaError
			if !tc.refused {
				if err != nil {
					t.Fatalf("Admit: %v", err)
				}
				if _, vs, err := s.CheckContext(t.Context(), `"x"`); err != nil || len(vs) != 0 {
					t.Errorf(`"x": %v, %v; want it accepted`, vs, err)
				}
				if _, vs, err := s.CheckContext(t.Context(), `1`); err != nil || len(vs) == 0 {
					t.Errorf(`1: %v, %v; want violations`, vs, err)
				}
				return
			}
			if !errors.As(err, &se) || !strings.HasPrefix(se.KeywordPath, "/$defs/d") || !strings.Contains(se.Message, "fan-out") {
				t.Fatalf("Admit = %v, want a *SchemaError naming a subschema under /$defs and its fan-out", err)
			}
			// Checked anyway, a reply costs no more than the budget.
			_, vs, err := s.CheckContext(t.Context(), `1`)
			var be *BudgetError
			if !errors.As(err, &be) || !errors.Is(err, ErrBudgetExceeded) || be.Budget != DefaultValidationBudget || vs != nil {
				t.Errorf("CheckContext = %v, %v; want a *BudgetError", vs, err)
			}
		})
	}
}

// TestScopeDependentReferencesAreRefused: the walk that meters a check
// cannot follow a reference resolved in the dynamic scope, so such a
// schema is not admitted, and a check against it fails the same way.
func TestScopeDependentReferencesAreRefused(t *testing.T) {
	for _, schema := range []string{
		`{"$dynamicAnchor":"node","type":"object","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"array","items":{"$recursiveRef":"#"}}`,
		`{"$ref":"https://json-schema.org/draft/2020-12/schema"}`,
	} {
		s, err := NewCache(Config{}).Compile([]byte(schema))
		if err != nil {
			t.Fatalf("Compile(%s): %v", schema, err)
		}
		var se *SchemaError
		if err := s.Admit(); !errors.As(err, &se) || !strings.Contains(se.Message, "dynamic scope") {
			t.Errorf("Admit(%s) = %v, want the reference refused", schema, err)
		}
		if _, _, err := s.CheckContext(t.Context(), `[]`); !errors.As(err, &se) {
			t.Errorf("CheckContext against %s = %v, want Admit's error", schema, err)
		}
	}
	// A $dynamicRef without a matching $dynamicAnchor is a plain reference.
	s, err := NewCache(Config{}).Compile([]byte(`{"$defs":{"a":{"type":"string"}},"type":"array","items":{"$dynamicRef":"#/$defs/a"}}`))
	if err != nil || s.Admit() != nil {
		t.Fatalf("a static $dynamicRef: %v, %v", err, s.Admit())
	}
	if _, vs, err := s.CheckContext(t.Context(), `["a",1]`); err != nil || len(vs) != 1 {
		t.Errorf("a static $dynamicRef: %v, %v; want one violation", vs, err)
	}
}

// TestSameValueCyclesAreRefused: a subschema that applies itself to the
// same value ($ref, allOf, anyOf, not, ... and back, never through a
// member or an item) makes the validator fail every value that reaches it
// with a reference cycle, so no reply could conform where it applies: the
// schema is refused before any reply, naming a subschema of the cycle.
// Recursion through members and items is admitted.
func TestSameValueCyclesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, schema, at string
	}{
		{"the root refers to itself", `{"$ref":"#"}`, ""},
		{"two $defs refer to each other", `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, "/$defs/"},
		{"an anyOf branch under a property", `{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},` +
			`"$defs":{"x":{"anyOf":[{"type":"string"},{"not":{"$ref":"#/$defs/x"}}]}}}`, "/$defs/x"},
		{"a dependentSchemas entry", `{"$defs":{"d":{"dependentSchemas":{"k":{"$ref":"#/$defs/d"}}}},"properties":{"p":{"$ref":"#/$defs/d"}}}`, "/$defs/d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewCache(Config{}).Compile([]byte(tc.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			var se *SchemaError
			if err := s.Admit(); !errors.As(err, &se) || !strings.HasPrefix(se.KeywordPath, tc.at) || !strings.Contains(se.Message, "reference cycle") {
				t.Fatalf("Admit = %v, want a *SchemaError at %q naming the reference cycle", err, tc.at)
			}
		})
	}
	for _, schema := range []string{
		`{"type":"object","properties":{"next":{"$ref":"#"}}}`,
		`{"$defs":{"n":{"anyOf":[{"type":"string"},{"type":"array","items":{"$ref":"#/$defs/n"}}]}},"$ref":"#/$defs/n"}`,
	} {
		s, err := NewCache(Config{}).Compile([]byte(schema))
		if err != nil || s.Admit() != nil {
			t.Errorf("recursion through members or items %s: %v, %v; want it admitted", schema, err, s.Admit())
		}
	}
}

// TestCheckIsBoundedByTheBudget: a reply whose check would take more than
// the budget is neither accepted nor refused: the check fails with a
// *BudgetError, and the session counts no re-ask. The same reply within a
// larger budget is checked.
func TestCheckIsBoundedByTheBudget(t *testing.T) {
	var branches []string
	for i := range 10 {
		branches = append(branches, fmt.Sprintf(`{"const":%d}`, i))
	}
	schema := `{"type":"array","items":{"anyOf":[` + strings.Join(branches, ",") + `]}}`
	reply := "[" + strings.Repeat("11,", 199) + "11]"
	small, err := NewCache(Config{ValidationBudget: 1000}).Compile([]byte(schema))
	if err != nil || small.Admit() != nil {
		t.Fatalf("Compile: %v, Admit: %v", err, small.Admit())
	}
	v, vs, err := small.CheckContext(t.Context(), reply)
	var be *BudgetError
	if !errors.As(err, &be) || be.Budget != 1000 || v != nil || vs != nil {
		t.Errorf("CheckContext = %v, %v, %v; want a *BudgetError of 1000 steps", v, vs, err)
	}
	sess := NewSession(small, 2)
	if _, err := sess.Check(t.Context(), 1, reply); !errors.Is(err, ErrBudgetExceeded) || sess.Retries() != 0 || len(sess.Errors()) != 0 {
		t.Errorf("Session.Check: %v, %d re-asks, errors %v; want the budget error and nothing counted", err, sess.Retries(), sess.Errors())
	}
	if _, vs := small.Check(reply); len(vs) != 1 || !strings.Contains(vs[0].Message, "cannot be checked") {
		t.Errorf("Check = %v, want one violation saying the reply cannot be checked", vs)
	}
	large, err := NewCache(Config{}).Compile([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	if _, vs, err := large.CheckContext(t.Context(), reply); err != nil || len(vs) != MaxViolations {
		t.Errorf("within the default budget: %d violations, %v; want %d", len(vs), err, MaxViolations)
	}
}

// endingContext is a context whose Err is nil for its first polls looks,
// then context.Canceled: it ends while a check runs, at a point the test
// knows, and counts how often the check looked.
type endingContext struct {
	context.Context
	polls int
	looks atomic.Int64
}

func (c *endingContext) Err() error {
	if int(c.looks.Add(1)) > c.polls {
		return context.Canceled
	}
	return nil
}

// TestCheckStopsWithItsContext: a check in progress looks at its context
// every checkEvery validation steps, and ends with the context's error at
// the first look after the context ended, without running the validator.
// The budget here is unbounded for the purpose: the fan-out alone would
// keep the check going for hours.
func TestCheckStopsWithItsContext(t *testing.T) {
	s, err := NewCache(Config{ValidationBudget: 1 << 50}).Compile([]byte(fanOut("anyOf", 40)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := &endingContext{Context: context.Background(), polls: 5}
	if _, _, err := s.CheckContext(ctx, `1`); !errors.Is(err, context.Canceled) {
		t.Fatalf("CheckContext = %v, want context.Canceled", err)
	}
	if looks := ctx.looks.Load(); looks != 6 {
		t.Errorf("the check looked at its context %d times, want 6: it went on after the context ended", looks)
	}
	// A context that ended before the check: nothing is walked.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.CheckContext(done, `1`); !errors.Is(err, context.Canceled) {
		t.Errorf("CheckContext with an ended context = %v", err)
	}
}

// TestValidationStepsAreMetered: the things that make one evaluation cost
// more than one step are counted: members, items, long strings and
// numbers, enum values, the arrays uniqueItems hashes.
func TestValidationStepsAreMetered(t *testing.T) {
	steps := func(schema, reply string) int {
		t.Helper()
		s, err := NewCache(Config{ValidationBudget: 1 << 40}).Compile([]byte(schema))
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseReply(reply)
		if err != nil {
			t.Fatal(err)
		}
		n, err := meterCheck(t.Context(), s.analysis, s.compiled, v, s.budget)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	long := `"` + strings.Repeat("x", 64<<10) + `"`
	digits := "1." + strings.Repeat("3", 4000)
	for _, tc := range []struct {
		name          string
		schema        string
		small, large  string
		atLeastFactor int
	}{
		{"members", `{"type":"object"}`, `{"a":1}`, `{` + members(1000) + `}`, 100},
		{"items under a union", `{"items":{"anyOf":[{"type":"string"},{"type":"number"}]}}`, `[1]`, "[" + strings.Repeat("1,", 999) + "1]", 100},
		{"a pattern on a long string", `{"pattern":"^x+$"}`, `"x"`, long, 100},
		{"a long number", `{"multipleOf":0.5}`, `1.5`, digits, 100},
		{"uniqueItems", `{"uniqueItems":true}`, `[[1],[2]]`, `[` + strings.Repeat(`[1,2,3,4,5,6,7,8],`, 100) + `[0]]`, 10},
	} {
		if s, l := steps(tc.schema, tc.small), steps(tc.schema, tc.large); l < tc.atLeastFactor*s {
			t.Errorf("%s: %d steps for the large reply, %d for the small one; want at least %d times more", tc.name, l, s, tc.atLeastFactor)
		}
	}
}

func members(n int) string {
	ms := make([]string, n)
	for i := range ms {
		ms[i] = fmt.Sprintf(`"m%d":%d`, i, i)
	}
	return strings.Join(ms, ",")
}

// evaluations counts the validator's evaluations of subschemas that
// carry the counting format (see FuzzCheckWithinBudget).
var evaluations atomic.Int64

// countingFormat is a format every subschema of the fuzzed schemas
// carries: the validator checks it once per evaluation of the subschema.
// It is unknown to llmrelay's compiler, for which it is an annotation.
const countingFormat = "llmrelay-count"

// fuzzedSchema builds a schema from b: up to 24 $defs, each applying up to
// four others (later ones, or earlier ones: cycles) to the same value
// ($ref, anyOf, oneOf, allOf, not, if/then/else) or to its members and
// items (properties, patternProperties, additionalProperties, items,
// prefixItems, contains), or a leaf. Every subschema object carries
// countingFormat.
func fuzzedSchema(b []byte) string {
	next := func() int {
		if len(b) == 0 {
			return 0
		}
		c := int(b[0])
		b = b[1:]
		return c
	}
	n := 2 + next()%23
	ref := func(i int) string {
		return fmt.Sprintf(`{"format":%q,"$ref":"#/$defs/d%d"}`, countingFormat, (i+1+next()%(n+2))%n)
	}
	refs := func(i int) string {
		k := 1 + next()%4
		rs := make([]string, k)
		for j := range rs {
			rs[j] = ref(i)
		}
		return "[" + strings.Join(rs, ",") + "]"
	}
	defs := make([]string, n)
	for i := range defs {
		var body string
		switch next() % 12 {
		case 0:
			body = `"anyOf":` + refs(i)
		case 1:
			body = `"oneOf":` + refs(i)
		case 2:
			body = `"allOf":` + refs(i)
		case 3:
			body = `"not":` + ref(i)
		case 4:
			body = `"if":` + ref(i) + `,"then":` + ref(i) + `,"else":` + ref(i)
		case 5:
			body = `"properties":{"a":` + ref(i) + `,"b":` + ref(i) + `},"patternProperties":{"^[ab]":` + ref(i) + `}`
		case 6:
			body = `"additionalProperties":` + ref(i) + `,"propertyNames":` + ref(i)
		case 7:
			body = `"items":` + ref(i) + `,"contains":` + ref(i)
		case 8:
			body = `"prefixItems":` + refs(i) + `,"items":` + ref(i)
		case 9:
			body = `"$ref":"#/$defs/d` + fmt.Sprint((i+1)%n) + `","anyOf":` + refs(i)
		case 10:
			body = `"maxLength":3,"minItems":2,"required":["a"]`
		default:
			body = `"dependentSchemas":{"a":` + ref(i) + `},"uniqueItems":true`
		}
		defs[i] = fmt.Sprintf(`"d%d":{"format":%q,%s}`, i, countingFormat, body)
	}
	return fmt.Sprintf(`{"format":%q,"$defs":{%s},"$ref":"#/$defs/d0"}`, countingFormat, strings.Join(defs, ","))
}

// fuzzedReply builds a JSON value from b: objects with the members a and
// b, arrays, strings and numbers, up to 6 deep.
func fuzzedReply(b []byte) string {
	var build func(depth int) string
	build = func(depth int) string {
		if len(b) == 0 || depth > 6 {
			return `"x"`
		}
		c := b[0]
		b = b[1:]
		switch c % 5 {
		case 0:
			return `{"a":` + build(depth+1) + `,"b":` + build(depth+1) + `}`
		case 1:
			return "[" + build(depth+1) + "," + build(depth+1) + "," + build(depth+1) + "]"
		case 2:
			return `"abcd"`
		case 3:
			return "12"
		}
		return "[]"
	}
	return build(0)
}

// FuzzCheckWithinBudget generates schemas with $ref, anyOf, oneOf, allOf
// (and the other applicators) fanning out, and replies to check against
// them, and holds every check to a fixed budget: the walk never spends
// more than the budget, and a check it lets run makes the validator
// evaluate no more subschemas than the walk counted steps (the validator's
// evaluations are counted through a format every subschema carries).
func FuzzCheckWithinBudget(f *testing.F) {
	const budget = 20000
	for _, seed := range [][2]string{
		{"\x1e\x00\x00\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01", "\x03"},
		{"\x10\x02\x01\x05\x07\x00\x08\x01\x03", "\x00\x01\x00\x02\x03"},
		{"\x05\x04\x00\x05\x00\x00\x09\x00\x00", "\x01\x00\x01\x02"},
		{"", ""},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	cache := NewCache(Config{ValidationBudget: budget})
	f.Fuzz(func(t *testing.T, schemaBytes, replyBytes []byte) {
		src, reply := fuzzedSchema(schemaBytes), fuzzedReply(replyBytes)
		s, err := cache.Compile([]byte(src))
		if err != nil {
			t.Fatalf("Compile(%s): %v", src, err)
		}
		v, err := ParseReply(reply)
		if err != nil {
			t.Fatalf("ParseReply(%s): %v", reply, err)
		}
		steps, err := meterCheck(context.Background(), s.analysis, s.compiled, v, budget)
		if steps > budget {
			t.Fatalf("the walk spent %d steps, over the budget of %d", steps, budget)
		}
		if err != nil {
			if !errors.Is(err, ErrBudgetExceeded) {
				t.Fatalf("the walk: %v", err)
			}
			if _, _, err := s.CheckContext(context.Background(), reply); !errors.Is(err, ErrBudgetExceeded) {
				t.Fatalf("CheckContext = %v after the walk ran out of budget", err)
			}
			return
		}
		doc, err := decodeJSON([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		counter := jsonschema.NewCompiler()
		counter.AssertFormat()
		counter.RegisterFormat(&jsonschema.Format{Name: countingFormat, Validate: func(any) error {
			evaluations.Add(1)
			return nil
		}})
		if err := counter.AddResource(resourceURL, doc); err != nil {
			t.Fatal(err)
		}
		counted, err := counter.Compile(resourceURL)
		if err != nil {
			t.Fatal(err)
		}
		before := evaluations.Load()
		_ = counted.Validate(v)
		if n := evaluations.Load() - before; n > int64(steps) {
			t.Fatalf("the validator evaluated %d subschemas, more than the %d steps the walk counted\nschema %s\nreply %s", n, steps, src, reply)
		}
		if _, _, err := s.CheckContext(context.Background(), reply); err != nil {
			t.Fatalf("CheckContext = %v after the walk fit the budget", err)
		}
	})
}
