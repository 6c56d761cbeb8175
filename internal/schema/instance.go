package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Instance returns a deterministic value that conforms to the JSON Schema
// in schema: what the mock provider replies with for structured output. It
// honours objects (required properties, then the optional ones near the
// root, minProperties, dependentRequired), arrays (prefixItems, items,
// minItems, maxItems, contains, uniqueItems), enum and const (the first
// value), numbers and integers within minimum, maximum and their exclusive
// forms and multipleOf, strings within minLength and maxLength with common
// formats and, best effort, a pattern, local $ref (JSON pointers and
// anchors), allOf (merged), anyOf and oneOf (the first branch) and type
// arrays (the first type other than null). Schemas beyond that may get a
// value that does not conform; callers validate it like any reply.
//
// It fails only when schema is not JSON.
func Instance(schema []byte) (any, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, &SchemaError{Message: "not valid JSON: " + jsonErrorText(err)}
	}
	g := &generator{root: doc, budget: instanceBudget}
	return g.value(doc, 0, 0), nil
}

// InstanceText is Instance as JSON text indented by two spaces, object
// keys sorted: a reply the mock streams in several deltas.
func InstanceText(schema []byte) (string, error) {
	v, err := Instance(schema)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

const (
	// maxInstanceDepth bounds the nesting of generated values: deeper
	// than any value a schema within maxSchemaDepth asks for without
	// recursion (an object nests a value every two levels of schema), so
	// that only a schema that never bottoms out is cut short.
	maxInstanceDepth = maxSchemaDepth/2 + 14
	// optionalDepth is the depth from which only required properties are
	// generated, and null is preferred where allowed, so that recursive
	// schemas end.
	optionalDepth = 4
	// maxRefHops bounds the $ref chain followed for one schema.
	maxRefHops = 32
	// maxGenerated bounds the counts (minItems, minLength, ...) honoured.
	maxGenerated = 1000
	// instanceBudget bounds the size of an instance, in values plus
	// 32-character pieces of strings: nested minItems cannot make it huge.
	instanceBudget = 20000
)

type generator struct {
	root   any
	budget int // what is left of instanceBudget
}

// value generates a value for schema s. variant > 0 asks for a value that
// differs from variant 0 where the schema allows, for uniqueItems.
func (g *generator) value(s any, depth, variant int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > maxInstanceDepth || g.budget <= 0 {
		return nil
	}
	g.budget--
	m = g.resolve(m)
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[variant%len(e)]
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if bs, ok := m[kw].([]any); ok && len(bs) > 0 {
			rest := without(m, kw)
			if bm, ok := branch(bs, depth).(map[string]any); ok {
				rest = merge(rest, bm)
			}
			return g.value(rest, depth, variant)
		}
	}
	switch typeOf(m, depth) {
	case "object":
		return g.object(m, depth)
	case "array":
		return g.array(m, depth)
	case "string":
		s := stringValue(m, variant)
		g.budget -= len(s) / 32
		return s
	case "integer":
		return numberValue(m, true, variant)
	case "number":
		return numberValue(m, false, variant)
	case "boolean":
		return variant%2 == 0
	}
	return nil
}

// branch picks the anyOf or oneOf branch to generate: the first schema,
// or deep down the first that allows null, so that recursion ends.
func branch(bs []any, depth int) any {
	if depth >= optionalDepth {
		for _, b := range bs {
			if bm, ok := b.(map[string]any); ok && slices.Contains(typeList(bm["type"]), "null") {
				return bm
			}
		}
	}
	for _, b := range bs {
		if b != false {
			return b
		}
	}
	return nil
}

// resolve follows $ref and merges allOf into one schema.
func (g *generator) resolve(m map[string]any) map[string]any {
	for range maxRefHops {
		if ref, ok := m["$ref"].(string); ok {
			target, _ := g.lookup(ref).(map[string]any)
			m = merge(target, without(m, "$ref"))
			continue
		}
		if all, ok := m["allOf"].([]any); ok {
			m = without(m, "allOf")
			for _, b := range all {
				if bm, ok := b.(map[string]any); ok {
					m = merge(m, bm)
				}
			}
			continue
		}
		return m
	}
	return without(without(m, "$ref"), "allOf")
}

// lookup resolves a local reference: "#", "#/json/pointer" or "#anchor".
func (g *generator) lookup(ref string) any {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	if s, err := url.PathUnescape(frag); err == nil {
		frag = s
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		v := g.root
		for _, tok := range strings.Split(frag, "/")[1:] {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			switch c := v.(type) {
			case map[string]any:
				v = c[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(c) {
					return nil
				}
				v = c[i]
			default:
				return nil
			}
		}
		return v
	}
	return findAnchor(g.root, frag)
}

func findAnchor(v any, name string) any {
	switch v := v.(type) {
	case map[string]any:
		if a, _ := v["$anchor"].(string); a == name {
			return v
		}
		if a, _ := v["$dynamicAnchor"].(string); a == name {
			return v
		}
		for _, k := range sortedKeys(v) {
			if f := findAnchor(v[k], name); f != nil {
				return f
			}
		}
	case []any:
		for _, e := range v {
			if f := findAnchor(e, name); f != nil {
				return f
			}
		}
	}
	return nil
}

// without returns m without keyword k, copying only when needed.
func without(m map[string]any, k string) map[string]any {
	if _, ok := m[k]; !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for kk, v := range m {
		if kk != k {
			out[kk] = v
		}
	}
	return out
}

// merge combines two schemas that must both hold: properties are united
// (a property in both must meet both), required lists joined, types
// intersected, lower bounds raised and upper bounds lowered; for any other
// keyword b wins.
func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		old, both := out[k]
		if !both {
			out[k] = v
			continue
		}
		switch k {
		case "properties":
			pa, _ := old.(map[string]any)
			pb, _ := v.(map[string]any)
			props := make(map[string]any, len(pa)+len(pb))
			for n, s := range pa {
				props[n] = s
			}
			for n, s := range pb {
				if prev, ok := props[n]; ok {
					s = map[string]any{"allOf": []any{prev, s}}
				}
				props[n] = s
			}
			out[k] = props
		case "required":
			ra, _ := old.([]any)
			rb, _ := v.([]any)
			out[k] = append(slices.Clone(ra), rb...)
		case "type":
			if t := intersectTypes(old, v); t != nil {
				out[k] = t
			}
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains":
			if ratOf(v) != nil && ratOf(old) != nil && ratOf(v).Cmp(ratOf(old)) > 0 {
				out[k] = v
			}
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains":
			if ratOf(v) != nil && ratOf(old) != nil && ratOf(v).Cmp(ratOf(old)) < 0 {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

func typeList(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// intersectTypes returns the types allowed by both a and b (integer being a
// number), or nil when they have none in common.
func intersectTypes(a, b any) any {
	var out []any
	for _, x := range typeList(a) {
		for _, y := range typeList(b) {
			switch {
			case x == y:
				out = append(out, x)
			case x == "number" && y == "integer", x == "integer" && y == "number":
				out = append(out, "integer")
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// typeOf picks the type to generate: the first declared one other than
// null (null itself deep down, where allowed, so recursion ends), else one
// the keywords imply.
func typeOf(m map[string]any, depth int) string {
	if ts := typeList(m["type"]); len(ts) > 0 {
		if depth >= optionalDepth && slices.Contains(ts, "null") {
			return "null"
		}
		for _, t := range ts {
			if t != "null" {
				return t
			}
		}
		return "null"
	}
	has := func(kws ...string) bool {
		for _, k := range kws {
			if _, ok := m[k]; ok {
				return true
			}
		}
		return false
	}
	switch {
	case has("properties", "required", "additionalProperties", "patternProperties", "minProperties", "dependentRequired"):
		return "object"
	case has("items", "prefixItems", "minItems", "maxItems", "contains", "uniqueItems"):
		return "array"
	case has("minLength", "maxLength", "pattern", "format"):
		return "string"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return ""
}

func (g *generator) object(m map[string]any, depth int) map[string]any {
	props, _ := m["properties"].(map[string]any)
	maxProps := intKeyword(m, "maxProperties", -1)
	out := map[string]any{}
	add := func(name string) bool {
		if _, done := out[name]; done {
			return true
		}
		s, ok := props[name]
		if !ok {
			if s, ok = additionalSchema(m, name); !ok {
				return false
			}
		}
		out[name] = g.value(s, depth+1, 0)
		return true
	}
	for _, r := range stringList(m["required"]) {
		add(r)
	}
	if depth < optionalDepth {
		for _, name := range sortedKeys(props) {
			if maxProps >= 0 && len(out) >= maxProps {
				break
			}
			if props[name] != false {
				add(name)
			}
		}
	}
	if deps, ok := m["dependentRequired"].(map[string]any); ok {
		for changed := true; changed; {
			changed = false
			for _, k := range sortedKeys(deps) {
				if _, present := out[k]; !present {
					continue
				}
				for _, d := range stringList(deps[k]) {
					if _, present := out[d]; !present && add(d) {
						changed = true
					}
				}
			}
		}
	}
	minProps := intKeyword(m, "minProperties", 0)
	for i := 1; len(out) < minProps && i <= minProps+64 && g.budget > 0; i++ {
		add("key" + strconv.Itoa(i))
	}
	return out
}

// additionalSchema returns the schema for a property that properties does
// not list, or false when the object allows none.
func additionalSchema(m map[string]any, name string) (any, bool) {
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, p := range sortedKeys(pp) {
			if re, err := regexp.Compile(p); err == nil && re.MatchString(name) {
				return pp[p], true
			}
		}
	}
	switch ap := m["additionalProperties"].(type) {
	case bool:
		return map[string]any{}, ap
	case map[string]any:
		return ap, true
	}
	return map[string]any{}, true
}

func (g *generator) array(m map[string]any, depth int) []any {
	prefix, _ := m["prefixItems"].([]any)
	items := m["items"]
	if old, ok := items.([]any); ok { // draft 7's tuple form
		prefix, items = old, m["additionalItems"]
	}
	n := max(intKeyword(m, "minItems", 0), len(prefix))
	contains, hasContains := m["contains"].(map[string]any)
	minContains := 0
	if hasContains {
		minContains = intKeyword(m, "minContains", 1)
		n = max(n, len(prefix)+minContains)
	}
	if maxItems := intKeyword(m, "maxItems", -1); maxItems >= 0 {
		n = min(n, maxItems)
	}
	unique := m["uniqueItems"] == true
	out := make([]any, 0, n)
	for i := range n {
		if g.budget <= 0 {
			break
		}
		var s any
		switch {
		case i < len(prefix):
			s = prefix[i]
		case items == false:
			return out
		case hasContains && i < len(prefix)+minContains:
			im, _ := items.(map[string]any)
			s = merge(im, contains)
		case items == nil || items == true:
			s = map[string]any{}
		default:
			s = items
		}
		variant := 0
		if unique {
			variant = i
		}
		out = append(out, g.value(s, depth+1, variant))
	}
	return out
}

// formatSamples are valid values of the common formats; variants of some
// follow in formatVariant.
var formatSamples = map[string]string{
	"date-time":             "2024-01-01T00:00:00Z",
	"date":                  "2024-01-01",
	"time":                  "12:00:00Z",
	"duration":              "P1D",
	"email":                 "user@example.com",
	"idn-email":             "user@example.com",
	"hostname":              "example.com",
	"idn-hostname":          "example.com",
	"ipv4":                  "192.0.2.1",
	"ipv6":                  "2001:db8::1",
	"uri":                   "https://example.com/",
	"iri":                   "https://example.com/",
	"uri-reference":         "/example",
	"iri-reference":         "/example",
	"uri-template":          "https://example.com/{id}",
	"uuid":                  "00000000-0000-4000-8000-000000000000",
	"json-pointer":          "/example",
	"relative-json-pointer": "0",
	"regex":                 ".*",
}

func formatVariant(format string, variant int) (string, bool) {
	day := strconv.Itoa(10 + variant%19) // 10..28
	switch format {
	case "date-time":
		return "2024-01-" + day + "T00:00:00Z", true
	case "date":
		return "2024-01-" + day, true
	case "email", "idn-email":
		return "user" + strconv.Itoa(variant) + "@example.com", true
	case "hostname", "idn-hostname":
		return "host" + strconv.Itoa(variant) + ".example.com", true
	case "uuid":
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", variant%1e12), true
	}
	return "", false
}

func stringValue(m map[string]any, variant int) string {
	minLen := intKeyword(m, "minLength", 0)
	maxLen := intKeyword(m, "maxLength", -1)
	format, _ := m["format"].(string)
	pattern, _ := m["pattern"].(string)
	var re *regexp.Regexp
	if pattern != "" {
		re, _ = regexp.Compile(pattern)
	}

	s, isFormat := formatSamples[format]
	switch {
	case isFormat && variant > 0:
		if v, ok := formatVariant(format, variant); ok {
			s = v
		}
	case isFormat:
	case re != nil:
		s = regexpSample(pattern)
	default:
		s = "text"
	}
	if variant > 0 && !isFormat {
		s += strconv.Itoa(variant)
	}
	fits := func(c string) bool {
		n := utf8.RuneCountInString(c)
		return n >= minLen && (maxLen < 0 || n <= maxLen) && (re == nil || re.MatchString(c))
	}
	if fits(s) {
		return s
	}
	// Pad at the end, then at the start; cut to maxLength.
	for _, c := range []string{padTo(s, minLen, false), padTo(s, minLen, true), cutTo(s, maxLen), cutTo(padTo("", minLen, false), maxLen)} {
		if fits(c) {
			return c
		}
	}
	return cutTo(padTo(s, minLen, false), maxLen)
}

func padTo(s string, n int, front bool) string {
	short := n - utf8.RuneCountInString(s)
	if short <= 0 {
		return s
	}
	if front {
		return strings.Repeat("x", short) + s
	}
	return s + strings.Repeat("x", short)
}

func cutTo(s string, n int) string {
	if n < 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// regexpSample returns a short string the pattern matches: the first
// alternative, the fewest repetitions, a letter or the first character of
// each class.
func regexpSample(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	var b strings.Builder
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			b.WriteString(string(re.Rune))
		case syntax.OpCharClass:
			b.WriteRune(classSample(re.Rune))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture:
			walk(re.Sub[0])
		case syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			for range re.Min {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			for _, s := range re.Sub {
				walk(s)
			}
		case syntax.OpAlternate:
			walk(re.Sub[0])
		}
	}
	walk(re)
	return b.String()
}

// classSample picks a character of a class given as ranges: a lower-case
// letter, a digit or an upper-case letter if the class has one, else its
// first printable character.
func classSample(ranges []rune) rune {
	for _, want := range []rune{'a', '0', 'A'} {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= want && want <= ranges[i+1] {
				return want
			}
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		if lo := max(ranges[i], ' '); lo <= ranges[i+1] {
			return lo
		}
	}
	if len(ranges) > 0 {
		return ranges[0]
	}
	return 'a'
}

// numberValue picks a number within the bounds: 0 when allowed, else the
// bound nearest to it, on a multipleOf step when there is one (1 for
// integers). variant moves it by whole steps where the bounds allow.
func numberValue(m map[string]any, integer bool, variant int) json.Number {
	// Draft 4 writes an exclusive bound as the boolean exclusiveMinimum
	// (exclusiveMaximum) beside minimum (maximum).
	lo, loEx := ratOf(m["minimum"]), m["exclusiveMinimum"] == true
	if x := ratOf(m["exclusiveMinimum"]); x != nil && (lo == nil || x.Cmp(lo) >= 0) {
		lo, loEx = x, true
	}
	hi, hiEx := ratOf(m["maximum"]), m["exclusiveMaximum"] == true
	if x := ratOf(m["exclusiveMaximum"]); x != nil && (hi == nil || x.Cmp(hi) <= 0) {
		hi, hiEx = x, true
	}
	within := func(v *big.Rat) bool {
		if lo != nil && (v.Cmp(lo) < 0 || loEx && v.Cmp(lo) == 0) {
			return false
		}
		return hi == nil || v.Cmp(hi) < 0 || !hiEx && v.Cmp(hi) == 0
	}
	step := ratOf(m["multipleOf"])
	if step != nil && step.Sign() <= 0 {
		step = nil
	}
	switch {
	case integer && step == nil:
		step = big.NewRat(1, 1)
	case integer:
		step = new(big.Rat).SetInt(step.Num()) // p is a whole multiple of p/q
	}

	var v *big.Rat
	zero := new(big.Rat)
	below := lo != nil && (lo.Sign() > 0 || lo.Sign() == 0 && loEx) // 0 is below the range
	switch {
	case within(zero):
		v = zero
	case step != nil && below:
		k := divRound(lo, step, true)
		if v = new(big.Rat).Mul(new(big.Rat).SetInt(k), step); !within(v) {
			v.Add(v, step)
		}
	case step != nil:
		k := divRound(hi, step, false)
		if v = new(big.Rat).Mul(new(big.Rat).SetInt(k), step); !within(v) {
			v.Sub(v, step)
		}
	case below:
		v = new(big.Rat).Set(lo)
		if loEx {
			if hi != nil {
				v.Add(lo, hi).Quo(v, big.NewRat(2, 1))
			} else {
				v.Add(v, big.NewRat(1, 1))
			}
		}
	default:
		v = new(big.Rat).Set(hi)
		if hiEx {
			if lo != nil {
				v.Add(lo, hi).Quo(v, big.NewRat(2, 1))
			} else {
				v.Sub(v, big.NewRat(1, 1))
			}
		}
	}
	if variant > 0 {
		d := step
		if d == nil {
			d = big.NewRat(1, 1)
		}
		moved := new(big.Rat).Add(v, new(big.Rat).Mul(d, big.NewRat(int64(variant), 1)))
		if within(moved) {
			v = moved
		}
	}
	if v.IsInt() {
		return json.Number(v.Num().String())
	}
	if s, exact := decimalString(v); exact {
		return json.Number(s)
	}
	f, _ := v.Float64()
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// divRound returns a/b rounded up (ceil) or down to a whole number.
func divRound(a, b *big.Rat, ceil bool) *big.Int {
	q := new(big.Rat).Quo(a, b)
	n, r := new(big.Int).QuoRem(q.Num(), q.Denom(), new(big.Int))
	switch {
	case ceil && r.Sign() > 0:
		n.Add(n, big.NewInt(1))
	case !ceil && r.Sign() < 0:
		n.Sub(n, big.NewInt(1))
	}
	return n
}

// ratOf returns a JSON number as an exact rational, nil for anything else.
func ratOf(v any) *big.Rat {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

// intKeyword returns a non-negative integer keyword, or def when absent.
func intKeyword(m map[string]any, k string, def int) int {
	r := ratOf(m[k])
	if r == nil || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() {
		return def
	}
	return int(min(r.Num().Int64(), maxGenerated))
}

func stringList(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
