package schema

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A schema that no value satisfies ({"type": "string", "minLength": 5,
// "maxLength": 2}, {"enum": []}, {"not": {}}, a required property whose
// subschema allows nothing, ...) would fail every reply: each attempt
// would be paid for, re-asked and refused. So compiling looks for such
// contradictions, and Schema.Admit refuses the schema before any provider
// call, naming the subschema where the contradiction is.
//
// The check is conservative: it refuses only what it proves. For each
// subschema it computes which kinds of JSON value (null, boolean, integer,
// other number, string, array, object) could satisfy it, over-approximated:
// a kind is ruled out only by a keyword of the subschema that no value of
// that kind can satisfy (minLength above maxLength, bounds with no number
// or no multiple between them, a required property nothing may hold, ...),
// or by a subschema every value must also satisfy ($ref, allOf, one branch
// at least of anyOf and oneOf, not, if/then/else) that rules it out. An
// enum or a const is decided exactly: its values are checked against their
// subschema by the validator. What it cannot decide (a pattern, a format,
// bounds spread over several allOf branches, unevaluatedProperties) it
// accepts. A subschema met again while it is being decided (recursion
// through a property or an item) is taken to allow every kind, so every
// subschema is decided once and the walk ends. Its work is bounded: it
// stops, accepting the schema, after maxStaticWalk steps, counting the
// validation steps its enum and const checks spend (each metered like a
// reply's check, within the validation budget).

// kinds is a set of the kinds of JSON value.
type kinds uint8

const (
	kindNull kinds = 1 << iota
	kindBoolean
	kindInteger
	kindFraction // a number that is not an integer
	kindString
	kindArray
	kindObject

	kindNumber = kindInteger | kindFraction
	allKinds   = kindNull | kindBoolean | kindNumber | kindString | kindArray | kindObject
)

// String names the kinds in k, e.g. "string or null".
func (k kinds) String() string {
	var names []string
	for _, n := range [...]struct {
		k    kinds
		name string
	}{{kindNull, "null"}, {kindBoolean, "boolean"}, {kindNumber, "number"}, {kindInteger, "integer"},
		{kindFraction, "non-integer number"}, {kindString, "string"}, {kindArray, "array"}, {kindObject, "object"}} {
		if k&n.k == n.k {
			names = append(names, n.name)
			k &^= n.k
		}
	}
	return strings.Join(names, " or ")
}

// kindOf returns the kind of a JSON value as decodeJSON returns it.
func kindOf(v any) kinds {
	switch v := v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBoolean
	case string:
		return kindString
	case []any:
		return kindArray
	case map[string]any:
		return kindObject
	default:
		if r, ok := new(big.Rat).SetString(fmt.Sprint(v)); ok && !r.IsInt() {
			return kindFraction
		}
		return kindInteger
	}
}

// typeKinds returns the kinds a "type" keyword allows.
func typeKinds(t *jsonschema.Types) kinds {
	if t == nil {
		return allKinds
	}
	var k kinds
	for _, name := range t.ToStrings() {
		switch name {
		case "null":
			k |= kindNull
		case "boolean":
			k |= kindBoolean
		case "number":
			k |= kindNumber
		case "integer":
			k |= kindInteger
		case "string":
			k |= kindString
		case "array":
			k |= kindArray
		case "object":
			k |= kindObject
		}
	}
	return k
}

// verdict is what the check found about one subschema: the kinds of value
// that might satisfy it, and why each other kind cannot.
type verdict struct {
	allowed kinds
	reasons []reason
}

// reason says why the kinds in out cannot satisfy a subschema.
type reason struct {
	out  kinds
	text string
	// ofType: the subschema's own "type" ruled them out.
	ofType bool
	// sub, when set, is a subschema every value of those kinds must also
	// satisfy, which allows none of them; hop says how the value gets
	// there, for the message.
	sub *jsonschema.Schema
	hop string
}

// rule rules out the kinds of out still allowed, for the reason r.
func (v *verdict) rule(out kinds, r reason) {
	if out &= v.allowed; out == 0 {
		return
	}
	v.allowed &^= out
	r.out = out
	v.reasons = append(v.reasons, r)
}

var anything = &verdict{allowed: allKinds}

// satisfiability is the state of one check.
type satisfiability struct {
	a      *analysis
	budget int
	// left is the steps the check may still take; gaveUp says it ran out.
	left   int
	gaveUp bool
	// verdicts holds each subschema's verdict, nil while it is being
	// decided.
	verdicts map[*jsonschema.Schema]*verdict
}

// unsatisfiable returns the *SchemaError that Admit returns for a schema no
// value satisfies, naming the subschema where the contradiction is; nil
// when the check cannot prove it.
func unsatisfiable(a *analysis, root *jsonschema.Schema, budget int) *SchemaError {
	c := &satisfiability{a: a, budget: budget, left: maxStaticWalk, verdicts: map[*jsonschema.Schema]*verdict{}}
	if v := c.verdict(root); c.gaveUp || v.allowed != 0 {
		return nil
	}
	// Go down to the contradiction: from a subschema that allows nothing,
	// into the subschema it must apply whose own emptiness is all that
	// remains of its reasons (its own "type" aside).
	at, seen := root, map[*jsonschema.Schema]bool{root: true}
	var hops []string
	for {
		var next *reason
		for i, r := range c.verdicts[at].reasons {
			switch {
			case r.ofType:
			case next == nil && r.sub != nil && !seen[r.sub] && c.verdicts[r.sub] != nil && c.verdicts[r.sub].allowed == 0:
				next = &c.verdicts[at].reasons[i]
			default:
				next = &reason{}
			}
		}
		if next == nil || next.sub == nil {
			break
		}
		hops = append(hops, next.hop)
		at = next.sub
		seen[at] = true
	}
	var texts []string
	for _, r := range c.verdicts[at].reasons {
		texts = append(texts, r.text)
	}
	what := "the schema"
	if at != root {
		what = "this subschema"
	}
	msg := fmt.Sprintf("no value can satisfy %s: %s", what, strings.Join(texts, "; "))
	if len(hops) > 0 {
		msg += "; and a reply cannot avoid it: " + strings.Join(hops, "; ")
	}
	return &SchemaError{KeywordPath: fragmentPointer(at.Location), Message: msg}
}

// spend takes n steps; false once the check ran out.
func (c *satisfiability) spend(n int) bool {
	if c.left -= n; c.left < 0 {
		c.gaveUp = true
	}
	return !c.gaveUp
}

// verdict decides s once.
func (c *satisfiability) verdict(s *jsonschema.Schema) *verdict {
	if v, ok := c.verdicts[s]; ok {
		if v == nil { // being decided: recursion through a member or an item
			return anything
		}
		return v
	}
	if !c.spend(1) {
		return anything
	}
	c.verdicts[s] = nil
	v := c.decide(s)
	c.verdicts[s] = v
	return v
}

// at returns the JSON pointer of s and its keyword path, quoted.
func at(s *jsonschema.Schema, keyword ...string) string {
	return quoteLocation(pointer(fragmentPointer(s.Location), keyword...))
}

func (c *satisfiability) decide(s *jsonschema.Schema) *verdict {
	if s.Bool != nil {
		if *s.Bool {
			return anything
		}
		return &verdict{reasons: []reason{{out: allKinds, text: "it is the schema false, which no value satisfies"}}}
	}
	v := &verdict{allowed: allKinds}
	if s.Types != nil {
		v.rule(^typeKinds(s.Types), reason{ofType: true, text: fmt.Sprintf("%q allows only %v", "type", typeKinds(s.Types))})
	}
	if s.Enum != nil || s.Const != nil {
		if c.candidates(s, v) {
			return v
		}
	}
	c.numbers(s, v)
	if s.MinLength != nil && s.MaxLength != nil && *s.MinLength > *s.MaxLength {
		v.rule(kindString, reason{text: fmt.Sprintf("minLength %d is greater than maxLength %d, so no string fits", *s.MinLength, *s.MaxLength)})
	}
	c.arrays(s, v)
	c.objects(s, v)
	c.applicators(s, v)
	return v
}

// must rules out of v the kinds in of whose values must also satisfy
// sub where sub allows none of them: for a subschema applied to the same
// value (same), the kinds sub rules out; for one applied to a member or
// an item the value must have, all of them when sub allows no value.
// hop says how the value comes to sub.
func (c *satisfiability) must(v *verdict, of kinds, sub *jsonschema.Schema, same bool, hop string) {
	sv := c.verdict(sub)
	out := of
	if same {
		out &^= sv.allowed
	} else if sv.allowed != 0 {
		out = 0
	}
	if out&v.allowed == 0 {
		return
	}
	text := hop + ", which allows no value"
	if sv.allowed != 0 {
		text = fmt.Sprintf("%s, which allows only %v", hop, sv.allowed)
	}
	v.rule(out, reason{text: text, sub: sub, hop: hop})
}

// candidates decides s exactly when it has an enum or a const: a value
// satisfies s only if it is one of theirs, so s allows the kinds of those
// that conform to it. false when a check would take too long, which
// leaves the kinds of every candidate allowed.
func (c *satisfiability) candidates(s *jsonschema.Schema, v *verdict) bool {
	values, keyword := []any(nil), "const"
	if s.Const != nil {
		values = []any{*s.Const}
	}
	if s.Enum != nil {
		values, keyword = s.Enum.Values, "enum"
	}
	var ok kinds
	var bad []string
	var why string
	for _, val := range values {
		conforms, fails, known := c.conforms(s, val)
		if !known {
			for _, val := range values {
				ok |= kindOf(val)
			}
			v.rule(^ok, reason{text: fmt.Sprintf("%s allows only %v", at(s, keyword), ok)})
			return false
		}
		if conforms {
			ok |= kindOf(val)
		} else if len(bad) < 3 {
			b, _ := marshalJSON(val)
			bad = append(bad, fmt.Sprintf("%s %s", truncate(string(b), 40), fails))
			why = fails
		}
	}
	var text string
	switch {
	case len(values) == 0:
		text = fmt.Sprintf("%s is empty, so no value is one of its values", at(s, keyword))
	case keyword == "const":
		b, _ := marshalJSON(values[0])
		text = fmt.Sprintf("%s is %s, which %s", at(s, keyword), truncate(string(b), 40), why)
	default:
		more := ""
		if len(values) > len(bad) {
			more = fmt.Sprintf(" (and %d more)", len(values)-len(bad))
		}
		text = fmt.Sprintf("none of the values of %s conforms to the rest of the schema: %s%s", at(s, keyword), strings.Join(bad, "; "), more)
	}
	v.rule(^ok, reason{text: text})
	return true
}

// conforms checks val against s with the validator, metered like a reply
// within the validation budget: whether it conforms, what the first
// violation says when it does not, and false for known when the check
// would take too long.
func (c *satisfiability) conforms(s *jsonschema.Schema, val any) (ok bool, why string, known bool) {
	limit := min(c.budget, c.left)
	spent, err := meterCheck(context.Background(), c.a, s, val, limit)
	if c.left -= spent; err != nil || c.left <= 0 {
		// Past the budget, this value is undecided; past what the
		// check may still take, the whole check is.
		c.gaveUp = c.gaveUp || limit < c.budget || c.left <= 0
		return false, "", false
	}
	err = s.Validate(val)
	if err == nil {
		return true, "", true
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return false, "", false
	}
	why = "does not conform"
	if vs := flatten(verr); len(vs) > 0 {
		why = "fails: " + vs[0].Message
		if vs[0].InstanceLocation != "" {
			why = fmt.Sprintf("fails at %s: %s", quoteLocation(vs[0].InstanceLocation), vs[0].Message)
		}
	}
	return false, why, true
}

// truncate shortens s to about n bytes for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && (s[i]&0xc0) == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// bound is one end of the numbers a subschema allows.
type bound struct {
	v       *big.Rat
	excl    bool
	keyword string
}

// tighter returns the inclusive bound incl and the exclusive one excl
// combined: the larger of them when low, else the smaller.
func tighter(incl, excl *big.Rat, low bool) *bound {
	inclusive, exclusive := "maximum", "exclusiveMaximum"
	if low {
		inclusive, exclusive = "minimum", "exclusiveMinimum"
	}
	switch {
	case incl == nil && excl == nil:
		return nil
	case incl == nil:
		return &bound{excl, true, exclusive}
	case excl == nil:
		return &bound{incl, false, inclusive}
	}
	c := excl.Cmp(incl)
	if !low {
		c = -c
	}
	if c >= 0 {
		return &bound{excl, true, exclusive}
	}
	return &bound{incl, false, inclusive}
}

func (b *bound) text(low bool) string {
	n := ratText(b.v) + " (" + b.keyword + ")"
	switch {
	case low && b.excl:
		return "greater than " + n
	case low:
		return "at least " + n
	case b.excl:
		return "less than " + n
	}
	return "at most " + n
}

// ratText writes r as a number.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// multiples returns the range of integers n for which n×step lies within
// lo..hi.
func multiples(lo, hi *bound, step *big.Rat) (*big.Int, *big.Int) {
	first := new(big.Rat).Quo(lo.v, step)
	last := new(big.Rat).Quo(hi.v, step)
	// ceil(first), floor(last); Int.Div rounds towards -∞ for a positive
	// divisor, which a Rat's denominator is.
	from := new(big.Int).Neg(new(big.Int).Div(new(big.Int).Neg(first.Num()), first.Denom()))
	to := new(big.Int).Div(last.Num(), last.Denom())
	if lo.excl && first.IsInt() {
		from.Add(from, big.NewInt(1))
	}
	if hi.excl && last.IsInt() {
		to.Sub(to, big.NewInt(1))
	}
	return from, to
}

// numbers rules out the numbers that minimum, maximum, their exclusive
// forms and multipleOf leave none of.
func (c *satisfiability) numbers(s *jsonschema.Schema, v *verdict) {
	if v.allowed&kindNumber == 0 {
		return
	}
	lo := tighter(s.Minimum, s.ExclusiveMinimum, true)
	hi := tighter(s.Maximum, s.ExclusiveMaximum, false)
	m := s.MultipleOf
	if m != nil && m.Sign() <= 0 {
		return
	}
	if m != nil && m.IsInt() {
		v.rule(kindFraction, reason{text: fmt.Sprintf("multipleOf %s allows only integers", ratText(m))})
	}
	if lo == nil || hi == nil {
		return
	}
	within := lo.text(true) + " and " + hi.text(false)
	if d := lo.v.Cmp(hi.v); d > 0 || d == 0 && (lo.excl || hi.excl) {
		v.rule(kindNumber, reason{text: "no number is " + within})
		return
	}
	// The integers among the multiples of p/q are the multiples of p.
	step := big.NewRat(1, 1)
	if m != nil {
		step.SetInt(m.Num())
	}
	if from, to := multiples(lo, hi, step); from.Cmp(to) > 0 {
		noun := "integer"
		switch {
		case m != nil && m.IsInt():
			noun = "multiple of " + ratText(m)
		case m != nil:
			noun = "integer multiple of " + ratText(m)
		}
		v.rule(kindInteger, reason{text: fmt.Sprintf("no %s is %s", noun, within)})
	}
	if v.allowed&kindFraction == 0 {
		return
	}
	if m == nil {
		if lo.v.Cmp(hi.v) == 0 && lo.v.IsInt() {
			v.rule(kindFraction, reason{text: fmt.Sprintf("the only number %s is an integer", within)})
		}
		return
	}
	// A multiple n×p/q of a fraction multipleOf is not an integer when q
	// does not divide n: one of two consecutive n, at least.
	from, to := multiples(lo, hi, m)
	q := m.Denom()
	switch d := from.Cmp(to); {
	case d > 0:
		v.rule(kindFraction, reason{text: fmt.Sprintf("no multiple of %s is %s", ratText(m), within)})
	case d == 0 && new(big.Int).Mod(from, q).Sign() == 0:
		v.rule(kindFraction, reason{text: fmt.Sprintf("the only multiple of %s %s is an integer", ratText(m), within)})
	}
}

// arrays rules out arrays when their keywords leave no length.
func (c *satisfiability) arrays(s *jsonschema.Schema, v *verdict) {
	if v.allowed&kindArray == 0 {
		return
	}
	minItems := 0
	if s.MinItems != nil {
		minItems = *s.MinItems
	}
	if s.MaxItems != nil && minItems > *s.MaxItems {
		v.rule(kindArray, reason{text: fmt.Sprintf("minItems %d is greater than maxItems %d, so no array fits", minItems, *s.MaxItems)})
		return
	}
	// The items an array of minItems must have.
	var prefix []*jsonschema.Schema
	var rest *jsonschema.Schema
	restKeyword := ""
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		rest, restKeyword = items, "items"
	case []*jsonschema.Schema:
		prefix = items
		switch add := s.AdditionalItems.(type) {
		case *jsonschema.Schema:
			rest, restKeyword = add, "additionalItems"
		case bool:
			if !add && minItems > len(items) {
				v.rule(kindArray, reason{text: fmt.Sprintf("an array needs at least %d items (minItems), and %s allows only %d", minItems, at(s, "additionalItems"), len(items))})
				return
			}
		}
	}
	if s.PrefixItems != nil || s.Items2020 != nil {
		prefix, rest, restKeyword = s.PrefixItems, s.Items2020, "items"
	}
	for i, sub := range prefix {
		if i >= minItems || !c.spend(1) {
			break
		}
		c.must(v, kindArray, sub, false, fmt.Sprintf("an array needs at least %d items (minItems), whose item %d must satisfy %s", minItems, i, at(sub)))
	}
	if rest != nil && minItems > len(prefix) {
		c.must(v, kindArray, rest, false, fmt.Sprintf("an array needs at least %d items (minItems), whose item %d must satisfy %s (%s)", minItems, len(prefix), at(rest), restKeyword))
	}
	if s.Contains == nil {
		return
	}
	minContains := 1
	if s.MinContains != nil {
		minContains = *s.MinContains
	}
	switch {
	case s.MaxContains != nil && minContains > *s.MaxContains:
		v.rule(kindArray, reason{text: fmt.Sprintf("minContains %d is greater than maxContains %d, so no array fits", minContains, *s.MaxContains)})
	case s.MaxItems != nil && minContains > *s.MaxItems:
		v.rule(kindArray, reason{text: fmt.Sprintf("an array must have at least %d items that match %q (minContains, 1 when unset), and maxItems is %d", minContains, "contains", *s.MaxItems)})
	case minContains > 0:
		c.must(v, kindArray, s.Contains, false, fmt.Sprintf("an array must have an item that satisfies %s (contains)", at(s.Contains)))
	}
}

// objects rules out objects when their keywords leave none: a required
// property no value or no name is allowed for, more required properties
// than maxProperties, fewer allowed names than minProperties.
func (c *satisfiability) objects(s *jsonschema.Schema, v *verdict) {
	if v.allowed&kindObject == 0 {
		return
	}
	if s.MinProperties != nil && s.MaxProperties != nil && *s.MinProperties > *s.MaxProperties {
		v.rule(kindObject, reason{text: fmt.Sprintf("minProperties %d is greater than maxProperties %d, so no object fits", *s.MinProperties, *s.MaxProperties)})
		return
	}
	required := slices.Compact(slices.Sorted(slices.Values(s.Required)))
	if s.MaxProperties != nil && len(required) > *s.MaxProperties {
		v.rule(kindObject, reason{text: fmt.Sprintf("an object must have the %d properties of %s, and %s allows at most %d", len(required), at(s, "required"), at(s, "maxProperties"), *s.MaxProperties)})
		return
	}
	noAdditional := false
	switch add := s.AdditionalProperties.(type) {
	case bool:
		noAdditional = !add
	case *jsonschema.Schema:
		noAdditional = c.verdict(add).allowed == 0
	}
	if s.MinProperties != nil && noAdditional && len(s.PatternProperties) == 0 {
		names := 0
		for _, k := range sortedKeys(s.Properties) {
			if c.verdict(s.Properties[k]).allowed != 0 {
				names++
			}
		}
		if *s.MinProperties > names {
			v.rule(kindObject, reason{text: fmt.Sprintf("an object needs at least %d properties (minProperties), and only %d names are allowed (%s, and %s allows no other)",
				*s.MinProperties, names, at(s, "properties"), at(s, "additionalProperties"))})
			return
		}
	}
	for _, name := range required {
		if v.allowed&kindObject == 0 || !c.spend(1+len(s.PatternProperties)) {
			return
		}
		where := fmt.Sprintf("an object must have property %q (%s)", name, at(s, "required"))
		matched := false
		if sub := s.Properties[name]; sub != nil {
			matched = true
			c.must(v, kindObject, sub, false, fmt.Sprintf("%s, whose value must satisfy %s", where, at(sub)))
		}
		for _, k := range slices.SortedFunc(func(yield func(jsonschema.Regexp) bool) {
			for re := range s.PatternProperties {
				if !yield(re) {
					return
				}
			}
		}, func(a, b jsonschema.Regexp) int { return strings.Compare(a.String(), b.String()) }) {
			if k.MatchString(name) {
				matched = true
				sub := s.PatternProperties[k]
				c.must(v, kindObject, sub, false, fmt.Sprintf("%s, whose value must satisfy %s", where, at(sub)))
			}
		}
		if !matched {
			switch add := s.AdditionalProperties.(type) {
			case bool:
				if !add {
					v.rule(kindObject, reason{text: fmt.Sprintf("%s, which %s does not list and %s forbids", where, at(s, "properties"), at(s, "additionalProperties"))})
				}
			case *jsonschema.Schema:
				c.must(v, kindObject, add, false, fmt.Sprintf("%s, whose value must satisfy %s", where, at(add)))
			}
		}
		if s.PropertyNames != nil && v.allowed&kindObject != 0 {
			if ok, why, known := c.conforms(s.PropertyNames, name); known && !ok {
				v.rule(kindObject, reason{text: fmt.Sprintf("%s, and that name %s (%s)", where, why, at(s.PropertyNames))})
			}
		}
		if sub := s.DependentSchemas[name]; sub != nil {
			c.must(v, kindObject, sub, true, fmt.Sprintf("%s, so the object must satisfy %s", where, at(sub)))
		}
		if sub, ok := s.Dependencies[name].(*jsonschema.Schema); ok {
			c.must(v, kindObject, sub, true, fmt.Sprintf("%s, so the object must satisfy %s", where, at(sub)))
		}
	}
}

// applicators rules out what the subschemas s applies to the same value
// rule out: every $ref and allOf, one of anyOf and oneOf at least, not,
// and if/then/else.
func (c *satisfiability) applicators(s *jsonschema.Schema, v *verdict) {
	for _, ref := range [...]struct {
		sub     *jsonschema.Schema
		keyword string
	}{{s.Ref, "$ref"}, {s.RecursiveRef, "$recursiveRef"}, {dynamicRefOf(s), "$dynamicRef"}} {
		if ref.sub != nil {
			c.must(v, allKinds, ref.sub, true, fmt.Sprintf("%s refers to %s", at(s, ref.keyword), at(ref.sub)))
		}
	}
	for _, sub := range s.AllOf {
		if v.allowed == 0 {
			return
		}
		c.must(v, allKinds, sub, true, fmt.Sprintf("every value must also satisfy %s (allOf)", at(sub)))
	}
	for _, list := range [...]struct {
		subs    []*jsonschema.Schema
		keyword string
	}{{s.AnyOf, "anyOf"}, {s.OneOf, "oneOf"}} {
		if list.subs == nil || v.allowed == 0 {
			continue
		}
		var some kinds
		for _, sub := range list.subs {
			some |= c.verdict(sub).allowed
		}
		text := fmt.Sprintf("no branch of %s allows any value", at(s, list.keyword))
		if some != 0 {
			text = fmt.Sprintf("the branches of %s allow only %v", at(s, list.keyword), some)
		}
		v.rule(^some, reason{text: text})
	}
	if s.Not != nil {
		if all := accepts(s.Not); all != 0 {
			text := fmt.Sprintf("%s allows every value, so %q refuses them all", at(s.Not), "not")
			if all != allKinds {
				text = fmt.Sprintf("%s allows every %v, so %q refuses them", at(s.Not), all, "not")
			}
			v.rule(all, reason{text: text})
		}
	}
	if s.If == nil || (s.Then == nil && s.Else == nil) || v.allowed == 0 {
		return
	}
	passes, always := c.verdict(s.If).allowed, accepts(s.If)
	then, els := allKinds, allKinds
	if s.Then != nil {
		then = c.verdict(s.Then).allowed
	}
	if s.Else != nil {
		els = c.verdict(s.Else).allowed
	}
	if out := always &^ then & v.allowed; out != 0 {
		v.rule(out, reason{text: fmt.Sprintf("every %v satisfies %s, and %s allows none", out, at(s.If), at(s.Then))})
	}
	if out := ^passes &^ els & v.allowed; out != 0 {
		v.rule(out, reason{text: fmt.Sprintf("no %v satisfies %s, and %s allows none", out, at(s.If), at(s.Else))})
	}
	if out := ^(then | els) & v.allowed; out != 0 {
		v.rule(out, reason{text: fmt.Sprintf("neither %s nor %s allows a %v", at(s.Then), at(s.Else), out)})
	}
}

// dynamicRefOf returns the subschema a $dynamicRef of s refers to
// statically (one resolved in the dynamic scope is refused before).
func dynamicRefOf(s *jsonschema.Schema) *jsonschema.Schema {
	if s.DynamicRef == nil {
		return nil
	}
	return s.DynamicRef.Ref
}

// accepts returns the kinds whose every value satisfies s, as far as its
// own keywords tell without looking into its subschemas: every kind for
// true and for a schema with no assertion, the kinds of its "type" when
// that is its only one, none otherwise. (Not looking further keeps it
// independent of the verdicts, which recursion over-approximates.)
func accepts(s *jsonschema.Schema) kinds {
	if s.Bool != nil {
		if *s.Bool {
			return allKinds
		}
		return 0
	}
	asserts := s.Ref != nil || s.RecursiveRef != nil || s.DynamicRef != nil || s.Enum != nil || s.Const != nil ||
		s.Not != nil || s.AllOf != nil || s.AnyOf != nil || s.OneOf != nil || s.If != nil || s.Format != nil ||
		s.MaxProperties != nil || s.MinProperties != nil || len(s.Required) > 0 || s.PropertyNames != nil ||
		len(s.Properties) > 0 || len(s.PatternProperties) > 0 || s.AdditionalProperties != nil ||
		len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.MinItems != nil || s.MaxItems != nil || s.UniqueItems || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
		s.Items != nil || s.AdditionalItems != nil || s.PrefixItems != nil || s.Items2020 != nil || s.UnevaluatedItems != nil ||
		s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil || s.ContentEncoding != nil || s.ContentMediaType != nil ||
		s.ContentSchema != nil || s.Maximum != nil || s.Minimum != nil || s.ExclusiveMaximum != nil || s.ExclusiveMinimum != nil ||
		s.MultipleOf != nil || len(s.Extensions) > 0
	if asserts {
		return 0
	}
	return typeKinds(s.Types)
}
