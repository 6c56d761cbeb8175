package schema

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const draft4 = `"$schema":"http://json-schema.org/draft-04/schema#",`

// TestUnsatisfiableSchemaIsRefused: a schema that no value satisfies
// compiles (it is valid JSON Schema) but is not admitted, with an error
// that names the subschema where the contradiction is and what
// contradicts what.
func TestUnsatisfiableSchemaIsRefused(t *testing.T) {
	// A chain of 300 $refs to a subschema that allows nothing.
	var chain []string
	for i := range 300 {
		chain = append(chain, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
	}
	chain = append(chain, `"d300":{"type":"boolean","enum":["true"]}`)
	tests := []struct {
		name, schema, at string
		says             []string
	}{
		{"minLength above maxLength", `{"type":"string","minLength":5,"maxLength":2}`, "",
			[]string{`"type" allows only string`, "minLength 5 is greater than maxLength 2"}},
		{"minimum above maximum", `{"type":"integer","minimum":10,"maximum":3}`, "",
			[]string{`"type" allows only integer`, "no number is at least 10 (minimum) and at most 3 (maximum)"}},
		{"minItems above maxItems", `{"type":"array","minItems":3,"maxItems":1}`, "", []string{"minItems 3 is greater than maxItems 1"}},
		{"an empty enum", `{"enum":[]}`, "", []string{"'/enum' is empty"}},
		{"a required property additionalProperties forbids", `{"type":"object","required":["a"],"properties":{},"additionalProperties":false}`, "",
			[]string{`property "a" ('/required')`, "'/properties' does not list and '/additionalProperties' forbids"}},
		{"a const that violates its type", `{"type":"string","const":5}`, "", []string{"'/const' is 5, which fails: got number, want string"}},
		{"no multiple of multipleOf within the bounds", `{"type":"integer","multipleOf":2,"minimum":3,"maximum":3}`, "",
			[]string{"no multiple of 2 is at least 3 (minimum) and at most 3 (maximum)"}},
		{"not of the empty schema", `{"not":{}}`, "", []string{`'/not' allows every value, so "not" refuses them all`}},
		{"an enum whose values violate the type", `{"type":["string"],"enum":[1,2]}`, "",
			[]string{`"type" allows only string`, "none of the values of '/enum' conforms", "1 fails: got number, want string"}},
		{"allOf of two types", `{"allOf":[{"type":"string"},{"type":"number"}]}`, "",
			[]string{"'/allOf/0' (allOf), which allows only string", "'/allOf/1' (allOf), which allows only number"}},
		{"a required property whose subschema is unsatisfiable", `{"type":"object","required":["a"],"properties":{"a":{"$ref":"#/$defs/x"}},` +
			`"$defs":{"x":{"type":"string","minLength":5,"maxLength":2}}}`, "/$defs/x",
			[]string{"no value can satisfy this subschema", "minLength 5 is greater than maxLength 2",
				`a reply cannot avoid it: an object must have property "a" ('/required'), whose value must satisfy '/properties/a'; '/properties/a/$ref' refers to '/$defs/x'`}},
		{"a required property that is false", `{"type":"object","required":["a"],"properties":{"a":false}}`, "/properties/a",
			[]string{"the schema false"}},
		{"a required name patternProperties gives no value", `{"type":"object","required":["x-a"],"patternProperties":{"^x-":{"not":true}}}`, "/patternProperties/^x-",
			[]string{"'/patternProperties/^x-/not'"}},
		{"a required name propertyNames refuses", `{"type":"object","required":["abc"],"propertyNames":{"maxLength":2}}`, "",
			[]string{`property "abc"`, "'/propertyNames'"}},
		{"more required properties than maxProperties", `{"type":"object","required":["a","b"],"maxProperties":1}`, "",
			[]string{"the 2 properties of '/required'"}},
		{"minProperties above maxProperties", `{"type":"object","minProperties":2,"maxProperties":1}`, "", []string{"minProperties 2 is greater than maxProperties 1"}},
		{"minProperties over the names allowed", `{"type":"object","properties":{"a":{},"b":false},"additionalProperties":false,"minProperties":2}`, "",
			[]string{"only 1 names are allowed"}},
		{"exclusive bounds at one number (2020-12)", `{"type":"number","exclusiveMinimum":3,"exclusiveMaximum":3}`, "",
			[]string{"no number is greater than 3 (exclusiveMinimum) and less than 3 (exclusiveMaximum)"}},
		{"exclusive bounds at one number (draft 4)", `{` + draft4 + `"type":"number","minimum":3,"exclusiveMinimum":true,"maximum":3}`, "",
			[]string{"no number is greater than 3"}},
		{"no integer between the bounds", `{"type":"integer","minimum":0.2,"maximum":0.8}`, "", []string{"no integer is at least 0.2"}},
		{"no multiple of a fraction between the bounds", `{"type":"number","multipleOf":0.5,"minimum":1.2,"maximum":1.4}`, "",
			[]string{"no multiple of 0.5 is at least 1.2 (minimum) and at most 1.4 (maximum)"}},
		{"an integer multipleOf on a non-integer bound", `{"type":"number","multipleOf":1,"minimum":1.5,"maximum":1.5}`, "",
			[]string{"multipleOf 1 allows only integers"}},
		{"an item that must exist but can hold nothing", `{"type":"array","minItems":1,"items":false}`, "/items", []string{"the schema false"}},
		{"a draft 7 tuple too short for minItems", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{}],"additionalItems":false,"minItems":2}`, "",
			[]string{"'/additionalItems' allows only 1"}},
		{"contains nothing can match", `{"type":"array","contains":{"type":"string","maxLength":0,"minLength":1}}`, "/contains",
			[]string{"minLength 1 is greater than maxLength 0", "an array must have an item that satisfies '/contains'"}},
		{"minContains above maxItems", `{"type":"array","contains":{},"minContains":3,"maxItems":2}`, "", []string{"minContains"}},
		{"every anyOf branch contradicts itself", `{"anyOf":[false,{"type":"string","maxLength":1,"minLength":2}]}`, "",
			[]string{"no branch of '/anyOf' allows any value"}},
		{"oneOf branches of the wrong type", `{"type":"object","oneOf":[{"type":"string"},{"type":"array"}]}`, "",
			[]string{"the branches of '/oneOf' allow only string or array"}},
		{"not of a type the schema requires", `{"type":"string","not":{"type":["string","null"]}}`, "",
			[]string{`'/not' allows every null or string, so "not" refuses them`}},
		{"then refuses what if always accepts", `{"type":"string","if":{"type":"string"},"then":false}`, "",
			[]string{"every string satisfies '/if', and '/then' allows none"}},
		{"a long $ref chain to an impossible enum", `{"$defs":{` + strings.Join(chain, ",") + `},"$ref":"#/$defs/d0"}`, "/$defs/d300",
			[]string{`"type" allows only boolean`, `none of the values of '/$defs/d300/enum' conforms`}},
		{"a dependentSchema of a required property", `{"type":"object","required":["a"],"dependentSchemas":{"a":{"type":"array"}}}`, "",
			[]string{"so the object must satisfy '/dependentSchemas/a', which allows only array"}},
	}
	cache := NewCache(DefaultConfig())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := cache.Compile([]byte(tt.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			var se *SchemaError
			if err := s.Admit(); !errors.As(err, &se) {
				t.Fatalf("Admit = %v, want a *SchemaError", err)
			}
			if se.KeywordPath != tt.at {
				t.Errorf("refused at %q, want %q: %v", se.KeywordPath, tt.at, se)
			}
			for _, want := range tt.says {
				if !strings.Contains(se.Message, want) {
					t.Errorf("message %q\ndoes not say %q", se.Message, want)
				}
			}
		})
	}
}

// TestSatisfiableLookAlikesAreAdmitted: schemas that look contradictory
// but are not are admitted, and a reply that conforms (the witness)
// passes their check. Schemas the check cannot decide are admitted too.
func TestSatisfiableLookAlikesAreAdmitted(t *testing.T) {
	tests := []struct{ name, schema, witness string }{
		{"minimum equal to maximum", `{"type":"integer","minimum":3,"maximum":3}`, `3`},
		{"a non-integer minimum equal to maximum", `{"type":"number","minimum":2.5,"maximum":2.5}`, `2.5`},
		{"an integer minimum equal to maximum, as a number", `{"type":"number","minimum":1,"maximum":1}`, `1`},
		{"draft 4 exclusiveMinimum true below maximum", `{` + draft4 + `"type":"number","minimum":3,"exclusiveMinimum":true,"maximum":4}`, `3.5`},
		{"draft 4 exclusiveMinimum false at maximum", `{` + draft4 + `"type":"number","minimum":3,"exclusiveMinimum":false,"maximum":3}`, `3`},
		{"2020-12 exclusiveMinimum below maximum", `{"type":"number","exclusiveMinimum":3,"maximum":3.5}`, `3.25`},
		{"2020-12 exclusive integer bounds two apart", `{"type":"integer","exclusiveMinimum":3,"exclusiveMaximum":5}`, `4`},
		{"exclusiveMinimum looser than minimum", `{"type":"integer","minimum":3,"exclusiveMinimum":2,"maximum":3}`, `3`},
		{"contradictory bounds without a type", `{"minimum":10,"maximum":3,"minLength":5,"maxLength":2}`, `true`},
		{"nullable string with contradictory lengths", `{"type":["string","null"],"minLength":5,"maxLength":2}`, `null`},
		{"string or integer with contradictory bounds", `{"type":["integer","string"],"minimum":10,"maximum":3}`, `"a"`},
		{"additionalProperties false with the required one in properties", `{"type":"object","required":["a"],"properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"a":"x"}`},
		{"patternProperties covering a required name", `{"type":"object","required":["x-a"],"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}`, `{"x-a":"y"}`},
		{"a required name left to additionalProperties", `{"type":"object","required":["a"],"additionalProperties":{"type":"string"}}`, `{"a":"x"}`},
		{"an optional property that can hold nothing", `{"type":"object","properties":{"a":false}}`, `{}`},
		{"a multipleOf with a multiple between the bounds", `{"type":"number","multipleOf":0.5,"minimum":1.2,"maximum":1.6}`, `1.5`},
		{"an integer multiple of a fractional multipleOf", `{"type":"integer","multipleOf":1.5,"minimum":2,"maximum":3.5}`, `3`},
		{"an integer multipleOf at an integer bound", `{"type":"number","multipleOf":2,"minimum":1,"maximum":3}`, `2`},
		{"an enum with one value of the type", `{"type":"string","enum":[1,"a"]}`, `"a"`},
		{"a const of the type", `{"type":"string","const":"x","maxLength":1}`, `"x"`},
		{"not of a type the schema allows besides", `{"type":["string","integer"],"not":{"type":"string"}}`, `1`},
		{"not of a schema that asserts more than a type", `{"type":"string","not":{"type":"string","minLength":3}}`, `"ab"`},
		{"an anyOf with one satisfiable branch", `{"anyOf":[{"type":"string","minLength":5,"maxLength":2},{"type":"null"}]}`, `null`},
		{"an empty array where items is false", `{"type":"array","items":false}`, `[]`},
		{"minContains 0 with a contains nothing matches", `{"type":"array","contains":false,"minContains":0}`, `[1]`},
		{"a tuple long enough", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false,"minItems":2}`, `["a",1]`},
		{"if/then/else with both branches possible", `{"if":{"type":"string"},"then":{"minLength":3},"else":{"type":"number"}}`, `"abc"`},
		{"a then that is false, reached by no value", `{"type":"number","if":{"type":"string"},"then":false}`, `1`},
		{"recursion through a property", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, `{"next":{}}`},
		{"allOf of overlapping types", `{"allOf":[{"type":["string","number"]},{"type":"number"}]}`, `1`},
		{"bounds split over allOf, which the check does not combine", `{"type":"number","allOf":[{"minimum":5},{"maximum":3}]}`, ``},
		{"a pattern no string of the length matches, which the check does not read", `{"type":"string","pattern":"^a{5}$","maxLength":2}`, ``},
		{"a required property that must recur forever, which the check does not follow",
			`{"$defs":{"n":{"type":"object","required":["next"],"properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, ``},
	}
	cache := NewCache(DefaultConfig())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := cache.Compile([]byte(tt.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if err := s.Admit(); err != nil {
				t.Fatalf("Admit = %v, want it admitted", err)
			}
			if tt.witness == "" {
				return
			}
			if _, vs, err := s.CheckContext(t.Context(), tt.witness); err != nil || len(vs) != 0 {
				t.Errorf("the witness %s: %v, %v; want it to conform", tt.witness, vs, err)
			}
		})
	}
}

// TestSatisfiabilityCheckIsBounded: the enum check is metered within the
// validation budget, and one that would pass it leaves the schema
// admitted (undecided) rather than refused.
func TestSatisfiabilityCheckIsBounded(t *testing.T) {
	// The enum value is a 1,000-item array, checked item by item against
	// an anyOf of 3 branches: more than a 2,000-step budget,
	// though the schema alone fits it.
	item := "[" + strings.Repeat(`"x",`, 999) + `"x"]`
	schema := `{"type":"array","items":{"anyOf":[{"type":"integer"},{"type":"boolean"},{"type":"null"}]},"enum":[` + item + `]}`
	for _, tc := range []struct {
		budget  int
		refused bool
	}{{DefaultValidationBudget, true}, {2000, false}} {
		s, err := NewCache(Config{ValidationBudget: tc.budget}).Compile([]byte(schema))
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		if err := s.Admit(); (err != nil) != tc.refused {
			t.Errorf("budget %d: Admit = %v, want refused %v", tc.budget, err, tc.refused)
		}
	}
}
