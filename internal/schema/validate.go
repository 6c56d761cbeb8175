package schema

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// MaxViolations bounds the violations reported for one reply: the first
// ones by instance location are kept.
const MaxViolations = 50

// Violation is one way a reply fails its schema.
type Violation struct {
	// InstanceLocation is a JSON pointer to the offending value in the
	// reply, "" for the whole reply.
	InstanceLocation string
	// KeywordLocation is a JSON pointer to the failing schema keyword, as
	// reached from the schema's root (through $ref), e.g.
	// "/properties/score/type". Empty when the reply is not JSON.
	KeywordLocation string
	// Message is short and stable, e.g. "got string, want number".
	Message string
}

// String renders v as a line of the re-ask message:
// `at '/score': got string, want number`.
func (v Violation) String() string {
	return "at " + quoteLocation(v.InstanceLocation) + ": " + v.Message
}

// Validate checks the value v (as decoded by ParseReply) against s and
// returns its violations, sorted by instance then keyword location, at most
// MaxViolations of them; none when v conforms. Its work is bounded by the
// validation budget (see budget.go): it fails with a *BudgetError when
// checking v would take more, with ctx's error when ctx ends first, and
// with Admit's error, whatever v, for a reference resolved in the
// dynamic scope.
func (s *Schema) Validate(ctx context.Context, v any) ([]Violation, error) {
	if s.analysis.scoped {
		return nil, s.Admit()
	}
	if _, err := meterCheck(ctx, s.analysis, s.compiled, v, s.budget); err != nil {
		return nil, err
	}
	err := s.compiled.Validate(v)
	if err == nil {
		return nil, nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []Violation{{Message: "cannot be validated: " + err.Error()}}, nil
	}
	return flatten(verr), nil
}

// CheckContext parses the reply text with ParseReply and validates the
// value (see Validate). It returns the value and no violations when the
// reply conforms; a reply that is not JSON is one violation with an empty
// keyword location. Its error is Validate's: the reply could not be
// checked.
func (s *Schema) CheckContext(ctx context.Context, reply string) (any, []Violation, error) {
	v, err := ParseReply(reply)
	var pe *ParseError
	if errors.As(err, &pe) {
		return nil, []Violation{{Message: pe.Reason()}}, nil
	}
	vs, err := s.Validate(ctx, v)
	if err != nil || len(vs) > 0 {
		return nil, vs, err
	}
	return v, nil, nil
}

// Check is CheckContext without a context, for tools and tests: a reply
// it cannot check within the budget is one violation of the whole reply
// saying so, never accepted.
func (s *Schema) Check(reply string) (any, []Violation) {
	v, vs, err := s.CheckContext(context.Background(), reply)
	if err != nil {
		return nil, []Violation{{Message: "cannot be checked: " + err.Error()}}
	}
	return v, vs
}

// flatten returns the leaf errors of the library's error tree as sorted,
// de-duplicated violations, the first MaxViolations of them. It walks the
// tree as the library's detailed output does, without building that
// output, keeps no more than a few times MaxViolations leaves at any time,
// however many the tree has, and describes only those it keeps.
func flatten(verr *jsonschema.ValidationError) []Violation {
	type leaf struct {
		instance, keyword string
		kind              jsonschema.ErrorKind
	}
	var kept []leaf
	keep := func() {
		slices.SortFunc(kept, func(a, b leaf) int {
			return cmp.Or(cmp.Compare(a.instance, b.instance), cmp.Compare(a.keyword, b.keyword))
		})
		kept = slices.CompactFunc(kept, func(a, b leaf) bool { return a.instance == b.instance && a.keyword == b.keyword })
		kept = kept[:min(len(kept), MaxViolations)]
	}
	leaves(verr, "", nil, func(e *jsonschema.ValidationError, keyword string) {
		kept = append(kept, leaf{pointer("", e.InstanceLocation...), keyword, e.ErrorKind})
		if len(kept) >= 4*MaxViolations {
			keep()
		}
	})
	keep()
	var out []Violation
	for _, l := range kept {
		for _, m := range describe(l.kind) {
			out = append(out, Violation{InstanceLocation: l.instance, KeywordLocation: l.keyword, Message: m})
		}
	}
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(
			cmp.Compare(a.InstanceLocation, b.InstanceLocation),
			cmp.Compare(a.KeywordLocation, b.KeywordLocation),
			cmp.Compare(a.Message, b.Message))
	})
	out = slices.Compact(out)
	return out[:min(len(out), MaxViolations)]
}

// leaves calls leaf with each error of e's tree that has no causes and its
// keyword location, as reached from the schema's root through $ref: what
// the library's DetailedOutput computes for it, given the schema location
// and keyword location of e's parent (kw: its pieces, built only for the
// leaves, since a chain of references makes them long).
func leaves(e *jsonschema.ValidationError, schemaURL string, kw *keywordPath, leaf func(e *jsonschema.ValidationError, keyword string)) {
	ref, isRef := e.ErrorKind.(*kind.Reference)
	if schemaURL != "" {
		piece := e.SchemaURL[len(schemaURL):]
		if isRef {
			piece = pointer(piece, ref.KeywordPath()...)
		}
		if piece != "" {
			kw = &keywordPath{up: kw, piece: piece}
		}
	}
	schemaURL = e.SchemaURL
	if isRef {
		schemaURL = ref.URL
	}
	if len(e.Causes) == 0 {
		keyword := kw.String()
		if !isRef {
			keyword = pointer(keyword, e.ErrorKind.KeywordPath()...)
		}
		leaf(e, keyword)
		return
	}
	for _, c := range e.Causes {
		leaves(c, schemaURL, kw, leaf)
	}
}

// keywordPath is a keyword location as a list of pieces, the last first.
type keywordPath struct {
	up    *keywordPath
	piece string
}

// String joins the pieces; "" for nil.
func (p *keywordPath) String() string {
	var pieces []string
	for ; p != nil; p = p.up {
		pieces = append(pieces, p.piece)
	}
	slices.Reverse(pieces)
	return strings.Join(pieces, "")
}

// messagesAt joins the messages of the violations at location at.
func messagesAt(vs []Violation, at string) string {
	var ms []string
	for _, v := range vs {
		if v.InstanceLocation == at && !slices.Contains(ms, v.Message) {
			ms = append(ms, v.Message)
		}
	}
	return strings.Join(ms, "; or ")
}

// printer renders the library's own messages, for the kinds describe has
// none for.
var printer = message.NewPrinter(language.English)

// describe returns the messages for one leaf error: one for most kinds, one
// per property for required, additionalProperties and dependentRequired.
func describe(e jsonschema.ErrorKind) []string {
	switch k := e.(type) {
	case *kind.Type:
		return []string{fmt.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))}
	case *kind.Enum:
		if len(k.Want) == 1 {
			return []string{fmt.Sprintf("got %s, want %s", display(k.Got), display(k.Want[0]))}
		}
		return []string{fmt.Sprintf("got %s, want one of %s", display(k.Got), displayList(k.Want))}
	case *kind.Const:
		return []string{fmt.Sprintf("got %s, want %s", display(k.Got), display(k.Want))}
	case *kind.Required:
		return eachProperty(k.Missing, "missing required property %s")
	case *kind.AdditionalProperties:
		return eachProperty(k.Properties, "property %s is not allowed")
	case *kind.DependentRequired:
		return eachProperty(k.Missing, "missing property %s, required when "+display(k.Prop)+" is present")
	case *kind.Dependency:
		return eachProperty(k.Missing, "missing property %s, required when "+display(k.Prop)+" is present")
	case *kind.PropertyNames:
		return []string{fmt.Sprintf("property name %s is not allowed", display(k.Property))}
	case *kind.MinLength:
		return []string{fmt.Sprintf("got %d characters, want at least %d", k.Got, k.Want)}
	case *kind.MaxLength:
		return []string{fmt.Sprintf("got %d characters, want at most %d", k.Got, k.Want)}
	case *kind.MinItems:
		return []string{fmt.Sprintf("got %d items, want at least %d", k.Got, k.Want)}
	case *kind.MaxItems:
		return []string{fmt.Sprintf("got %d items, want at most %d", k.Got, k.Want)}
	case *kind.MinProperties:
		return []string{fmt.Sprintf("got %d properties, want at least %d", k.Got, k.Want)}
	case *kind.MaxProperties:
		return []string{fmt.Sprintf("got %d properties, want at most %d", k.Got, k.Want)}
	case *kind.Minimum:
		return []string{fmt.Sprintf("got %s, want at least %s", ratString(k.Got), ratString(k.Want))}
	case *kind.Maximum:
		return []string{fmt.Sprintf("got %s, want at most %s", ratString(k.Got), ratString(k.Want))}
	case *kind.ExclusiveMinimum:
		return []string{fmt.Sprintf("got %s, want more than %s", ratString(k.Got), ratString(k.Want))}
	case *kind.ExclusiveMaximum:
		return []string{fmt.Sprintf("got %s, want less than %s", ratString(k.Got), ratString(k.Want))}
	case *kind.MultipleOf:
		return []string{fmt.Sprintf("got %s, want a multiple of %s", ratString(k.Got), ratString(k.Want))}
	case *kind.Pattern:
		return []string{fmt.Sprintf("got %s, want a string matching the pattern %s", display(k.Got), display(k.Want))}
	case *kind.Format:
		return []string{fmt.Sprintf("got %s, want format %s", display(k.Got), display(k.Want))}
	case *kind.UniqueItems:
		return []string{fmt.Sprintf("items %d and %d are equal, want unique items", k.Duplicates[0], k.Duplicates[1])}
	case *kind.AdditionalItems:
		return []string{fmt.Sprintf("got %d items too many", k.Count)}
	case *kind.Contains:
		return []string{"no item matches the \"contains\" schema"}
	case *kind.MinContains:
		return []string{fmt.Sprintf("got %d items matching \"contains\", want at least %d", len(k.Got), k.Want)}
	case *kind.MaxContains:
		return []string{fmt.Sprintf("got %d items matching \"contains\", want at most %d", len(k.Got), k.Want)}
	case *kind.OneOf:
		if len(k.Subschemas) >= 2 {
			return []string{fmt.Sprintf("matches oneOf branches %d and %d, want exactly one", k.Subschemas[0], k.Subschemas[1])}
		}
		return []string{"matches no oneOf branch"}
	case *kind.AnyOf:
		return []string{"matches no anyOf branch"}
	case *kind.Not:
		return []string{"matches the \"not\" schema, want a value that does not"}
	case *kind.FalseSchema:
		return []string{"no value is allowed here"}
	}
	return []string{e.LocalizedString(printer)}
}

func eachProperty(names []string, format string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf(format, display(n))
	}
	return out
}

// maxDisplay bounds how much of a value a message quotes.
const maxDisplay = 64

// display renders a value of the reply or the schema as compact JSON,
// shortened to about maxDisplay bytes.
func display(v any) string {
	b, err := marshalJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) <= maxDisplay {
		return s
	}
	cut := maxDisplay
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// displayList renders enum values, the first ten of them.
func displayList(vs []any) string {
	const most = 10
	parts := make([]string, 0, min(len(vs), most)+1)
	for i, v := range vs {
		if i == most {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(vs)-most))
			break
		}
		parts = append(parts, display(v))
	}
	return strings.Join(parts, ", ")
}

// ratString renders r exactly when it is a finite decimal, else as a float.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	if s, exact := decimalString(r); exact {
		return s
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

// decimalString renders r as a decimal without exponent, and reports whether
// that is exact (r's denominator has no prime factors but 2 and 5).
func decimalString(r *big.Rat) (string, bool) {
	d := new(big.Int).Set(r.Denom())
	digits := 0
	for _, p := range []int64{2, 5} {
		bp := big.NewInt(p)
		n := 0
		m := new(big.Int)
		for {
			q, rem := new(big.Int).QuoRem(d, bp, m)
			if rem.Sign() != 0 {
				break
			}
			d = q
			n++
		}
		digits = max(digits, n)
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return "", false
	}
	return r.FloatString(digits), true
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
