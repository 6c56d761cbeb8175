package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Checking a reply is bounded work. A schema whose subschemas refer to one
// another more than once on the same value ($ref, anyOf, oneOf, allOf,
// not, if/then/else) makes the validator evaluate exponentially many
// subschemas: 30 $defs that each refer twice to the next under anyOf are
// 2^31 evaluations of one value, and a reply that fails them keeps every
// failure in memory. So every check is metered before it runs: a walk of
// the reply along the schema, the same way the validator goes but
// counting every branch, spends validation steps from the budget
// (Config.ValidationBudget): one per subschema evaluated on a value, plus
// the work that evaluation does in proportion to the value (each member
// or item visited, each pattern matched, each enum value compared, long
// strings and numbers in proportion to their length). A check whose walk
// spends more than the budget fails with a *BudgetError without running
// the validator; one that fits runs it, so the validator's work and the
// failures it keeps are bounded by the budget too. The walk looks at the
// check's context every checkEvery steps: a check stops when its call
// ends. A schema on which any value would spend more than the budget is
// refused before any reply, by Schema.Admit.

// DefaultValidationBudget is the validation budget of a Config that sets
// none: about 50 ms of validation at most on a 2-core machine, and a
// few tens of MB of failures kept at most, whatever the schema and reply.
// A reply of a few hundred KB against a schema without fan-out spends a
// small part of it.
const DefaultValidationBudget = 100_000

// maxStaticWalk bounds the walk that compiling takes to learn whether any
// value could be checked against the root (see analyze).
const maxStaticWalk = 1 << 21

// checkEvery is how many validation steps the walk takes between two looks
// at the check's context.
const checkEvery = 1024

// ErrBudgetExceeded is matched (errors.Is) by every *BudgetError.
var ErrBudgetExceeded = errors.New("the reply cannot be checked against the schema within the validation budget")

// BudgetError says that checking a reply against its schema would take
// more than the validation budget: the schema's fan-out, the reply's size,
// or both, are too large. The reply is neither accepted nor refused.
type BudgetError struct {
	// Budget is the budget that was spent, in validation steps.
	Budget int
}

// Error implements error.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("%v: it needs more than %d validation steps (a subschema evaluated on a value is one; "+
		"$ref, anyOf, oneOf and allOf that reach a subschema more than once on the same value multiply them)", ErrBudgetExceeded, e.Budget)
}

// Is makes errors.Is(err, ErrBudgetExceeded) true.
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExceeded }

// errDynamicScope ends the walk at a reference whose target depends on
// the dynamic scope; Schema.Admit refuses such schemas.
var errDynamicScope = errors.New("a reference resolved in the dynamic scope")

// dynamicTarget reports whether s has a $dynamicRef or $recursiveRef whose
// target the validator looks up in the dynamic scope.
func dynamicTarget(s *jsonschema.Schema) bool {
	if d := s.DynamicRef; d != nil && d.Anchor != "" && d.Ref.DynamicAnchor == d.Anchor {
		return true
	}
	return s.RecursiveRef != nil && s.RecursiveRef.RecursiveAnchor
}

// applicators returns the subschemas s applies to the value it is applied
// to, whatever the value: the references, not, if, then and else, and the
// lists allOf, anyOf and oneOf. The zero schemas are nil.
func applicators(s *jsonschema.Schema) ([7]*jsonschema.Schema, [3][]*jsonschema.Schema) {
	var dynamic *jsonschema.Schema
	if s.DynamicRef != nil {
		dynamic = s.DynamicRef.Ref
	}
	return [...]*jsonschema.Schema{s.Ref, s.RecursiveRef, dynamic, s.Not, s.If, s.Then, s.Else},
		[...][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf}
}

// sameValue calls fn with each subschema that s may apply to the value s
// is applied to: its applicators, and its dependentSchemas (and schema
// dependencies), which apply to an object that has the property.
func sameValue(s *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	refs, lists := applicators(s)
	for _, sub := range refs {
		if sub != nil {
			fn(sub)
		}
	}
	for _, list := range lists {
		for _, sub := range list {
			fn(sub)
		}
	}
	for _, k := range sortedKeys(s.DependentSchemas) {
		fn(s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if sub, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			fn(sub)
		}
	}
}

// innerValues calls fn with each subschema that s applies to members,
// items or property names of the value.
func innerValues(s *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	for _, k := range sortedKeys(s.Properties) {
		fn(s.Properties[k])
	}
	for _, sub := range s.PatternProperties {
		fn(sub)
	}
	for _, v := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch v := v.(type) {
		case *jsonschema.Schema:
			fn(v)
		case []*jsonschema.Schema:
			for _, sub := range v {
				fn(sub)
			}
		}
	}
	for _, sub := range s.PrefixItems {
		fn(sub)
	}
	for _, sub := range [...]*jsonschema.Schema{s.PropertyNames, s.UnevaluatedProperties, s.Items2020, s.Contains, s.UnevaluatedItems, s.ContentSchema} {
		if sub != nil {
			fn(sub)
		}
	}
}

// analysis is what compiling found about the work a schema takes.
type analysis struct {
	// weight is the steps one evaluation of each subschema takes apart
	// from its subschemas and the value's size: one, plus its enum and
	// const values' sizes, its required and dependentRequired names.
	weight map[*jsonschema.Schema]int
	// refusal is Admit's error; nil when the schema is admitted.
	refusal *SchemaError
	// scoped says the schema has a reference resolved in the dynamic
	// scope, which the walk cannot follow: no reply is checked.
	scoped bool
}

// analyze finds the subschemas reachable from root, their weights, and
// whether Admit refuses the schema: for a subschema on which any value
// would spend more than budget (a fan-out), or for a reference resolved
// in the dynamic scope, whose work the walk cannot bound.
func analyze(root *jsonschema.Schema, budget int) *analysis {
	a := &analysis{weight: map[*jsonschema.Schema]int{}}
	order := []*jsonschema.Schema{root}
	a.weight[root] = 0
	for i := 0; i < len(order); i++ {
		visit := func(sub *jsonschema.Schema) {
			if _, seen := a.weight[sub]; !seen {
				a.weight[sub] = 0
				order = append(order, sub)
			}
		}
		sameValue(order[i], visit)
		innerValues(order[i], visit)
	}
	slices.SortFunc(order, func(x, y *jsonschema.Schema) int { return strings.Compare(x.Location, y.Location) })
	for _, s := range order {
		a.weight[s] = staticWeight(s)
		if a.refusal == nil && dynamicTarget(s) {
			a.scoped = true
			a.refusal = &SchemaError{KeywordPath: fragmentPointer(s.Location), Message: "a $dynamicRef or $recursiveRef whose target " +
				"depends on the dynamic scope is not supported: the work of checking a reply against it cannot be bounded; use $ref"}
		}
	}
	if a.refusal != nil {
		return a
	}
	// The steps one value spends on each subschema, counting only the
	// subschemas applied to the same value: a lower bound of what any
	// value costs. A reference back to a subschema being evaluated on the
	// same value is a cycle, where the validator stops: it fails the value
	// with a reference cycle, whatever the value, so no reply that reaches
	// the subschema could conform (JSON Schema leaves such a schema's
	// behaviour undefined). The schema is refused, naming the subschema
	// the cycle comes back to.
	cost := map[*jsonschema.Schema]int{}
	const visiting = -1
	var fanOut func(s *jsonschema.Schema) int
	fanOut = func(s *jsonschema.Schema) int {
		switch c, ok := cost[s]; {
		case c == visiting:
			if a.refusal == nil {
				a.refusal = &SchemaError{KeywordPath: fragmentPointer(s.Location), Message: "a reference cycle: this subschema " +
					"applies itself to the same value again ($ref, allOf, anyOf, oneOf, not, if/then/else or dependentSchemas, " +
					"without going into a property or an item), so no value could be checked against it"}
			}
			return 1
		case ok:
			return c
		}
		cost[s] = visiting
		total := a.weight[s]
		sameValue(s, func(sub *jsonschema.Schema) { total = min(total+fanOut(sub), budget+1) })
		cost[s] = total
		return total
	}
	for _, s := range order {
		fanOut(s)
	}
	if a.refusal != nil {
		return a
	}
	// Name the subschema where the fan-out passes the budget: the first
	// one over it whose own subschemas each stay within it. The walk of a
	// value checked against the root alone counts the path too: it may
	// pass the budget where no subschema's count does.
	// (That walk stops at maxStaticWalk steps: a server with a budget
	// larger than that only learns at the first reply.)
	if cost[root] <= budget && budget <= maxStaticWalk {
		if _, err := meterCheck(context.Background(), a, root, nil, budget); errors.Is(err, ErrBudgetExceeded) {
			cost[root] = budget + 1
		}
	}
	for _, s := range order {
		if cost[s] <= budget {
			continue
		}
		within := true
		sameValue(s, func(sub *jsonschema.Schema) { within = within && (cost[sub] <= budget || sub == s) })
		if within {
			a.refusal = &SchemaError{KeywordPath: fragmentPointer(s.Location), Message: fmt.Sprintf(
				"checking a value against this subschema takes more than %d validation steps: its $ref, anyOf, oneOf and allOf "+
					"reach subschemas more than once on the same value (a fan-out); no reply could be checked within the server's budget", budget)}
			break
		}
	}
	if a.refusal == nil {
		a.refusal = unsatisfiable(a, root, budget)
	}
	return a
}

// staticWeight is the steps one evaluation of s takes apart from its
// subschemas and the value's size.
func staticWeight(s *jsonschema.Schema) int {
	w := 1 + len(s.Required)
	if s.Enum != nil {
		w += size(s.Enum.Values)
	}
	if s.Const != nil {
		w += size(*s.Const)
	}
	for _, names := range s.DependentRequired {
		w += len(names)
	}
	for _, d := range s.Dependencies {
		if names, ok := d.([]string); ok {
			w += len(names)
		}
	}
	return w
}

// size counts the values in v, v included.
func size(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += size(e)
		}
	case []any:
		for _, e := range v {
			n += size(e)
		}
	}
	return n
}

// meter is the walk that meters one check (see the comment at the top).
type meter struct {
	ctx    context.Context
	a      *analysis
	budget int
	left   int
	// untilLook counts down the steps to the next look at ctx.
	untilLook int
	// onPath holds the subschemas being evaluated on the current value,
	// with the number of the value: the validator stops at a subschema
	// that is already being evaluated on the same value.
	onPath map[*jsonschema.Schema]int
	// value numbers the value being walked; values counts them; same
	// counts the subschemas on the path for the current value, hops all
	// those on the path from the root; depth is the value's depth in the
	// reply.
	value, values, same, hops, depth int
	// sizes memoizes the sizes of arrays checked for uniqueItems, by
	// their first item.
	sizes map[*any]int
}

// meterCheck walks v along a's schema root, spending steps from budget,
// and returns the steps spent (at most budget: the walk stops there). Its error is a *BudgetError when the walk
// spends more than budget, the context's error when the context ends
// first, and errDynamicScope at a reference the walk cannot follow.
func meterCheck(ctx context.Context, a *analysis, root *jsonschema.Schema, v any, budget int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m := &meter{ctx: ctx, a: a, budget: budget, left: budget, untilLook: checkEvery, onPath: map[*jsonschema.Schema]int{}}
	err := m.eval(root, v)
	return min(budget-m.left, budget), err
}

func (m *meter) spend(n int) error {
	m.left -= n
	if m.left < 0 {
		return &BudgetError{Budget: m.budget}
	}
	if m.untilLook -= n; m.untilLook <= 0 {
		m.untilLook = checkEvery
		return m.ctx.Err()
	}
	return nil
}

// eval walks the evaluation of s on v.
func (m *meter) eval(s *jsonschema.Schema, v any) error {
	// Each evaluation also walks the subschemas being evaluated on the
	// same value (the validator's cycle check), and a failure copies its
	// value's location and, reported, its keyword location, which is as
	// long as the path of subschemas from the root.
	if err := m.spend(m.a.weight[s] + m.same/64 + m.depth/4 + m.hops/16); err != nil {
		return err
	}
	if s.Bool != nil {
		return nil
	}
	prev, had := m.onPath[s]
	if had && prev == m.value {
		return nil
	}
	if dynamicTarget(s) {
		return errDynamicScope
	}
	m.onPath[s] = m.value
	m.same++
	m.hops++
	err := m.evalOn(s, v)
	m.same--
	m.hops--
	if had {
		m.onPath[s] = prev
	} else {
		delete(m.onPath, s)
	}
	return err
}

func (m *meter) evalOn(s *jsonschema.Schema, v any) error {
	refs, lists := applicators(s)
	for _, sub := range refs {
		if sub == nil {
			continue
		}
		if err := m.eval(sub, v); err != nil {
			return err
		}
	}
	for _, list := range lists {
		for _, sub := range list {
			if err := m.eval(sub, v); err != nil {
				return err
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return m.object(s, v)
	case []any:
		return m.array(s, v)
	case string:
		return m.spend(stringWork(s, v))
	case json.Number:
		return m.spend(numberWork(s, v))
	}
	return nil
}

// inner walks the evaluation of s on v, a member, an item or a property
// name of the current value.
func (m *meter) inner(s *jsonschema.Schema, v any) error {
	value, same := m.value, m.same
	m.values++
	m.value, m.same = m.values, 0
	m.depth++
	err := m.eval(s, v)
	m.value, m.same = value, same
	m.depth--
	return err
}

func (m *meter) object(s *jsonschema.Schema, obj map[string]any) error {
	// The validator visits every member.
	if err := m.spend(len(obj)); err != nil {
		return err
	}
	for k, v := range obj {
		evaluated := false
		if sub := s.Properties[k]; sub != nil {
			evaluated = true
			if err := m.inner(sub, v); err != nil {
				return err
			}
		}
		for re, sub := range s.PatternProperties {
			if err := m.spend(1 + len(k)/32); err != nil {
				return err
			}
			if re.MatchString(k) {
				evaluated = true
				if err := m.inner(sub, v); err != nil {
					return err
				}
			}
		}
		if sub, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !evaluated {
			if err := m.inner(sub, v); err != nil {
				return err
			}
		}
		if sub := s.UnevaluatedProperties; sub != nil {
			if err := m.inner(sub, v); err != nil {
				return err
			}
		}
		if sub := s.PropertyNames; sub != nil {
			if err := m.inner(sub, k); err != nil {
				return err
			}
		}
		if sub := s.DependentSchemas[k]; sub != nil {
			if err := m.eval(sub, obj); err != nil {
				return err
			}
		}
		if sub, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			if err := m.eval(sub, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *meter) array(s *jsonschema.Schema, arr []any) error {
	if err := m.spend(len(arr)); err != nil {
		return err
	}
	if s.UniqueItems && len(arr) > 1 {
		// Every item is hashed whole (and up to 20 compared pairwise).
		if err := m.spend(m.arraySize(arr) + min(len(arr), 20)*min(len(arr), 20)); err != nil {
			return err
		}
	}
	for i, v := range arr {
		var subs [4]*jsonschema.Schema
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			subs[0] = items
		case []*jsonschema.Schema:
			if i < len(items) {
				subs[0] = items[i]
			} else if additional, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				subs[0] = additional
			}
		}
		if i < len(s.PrefixItems) {
			subs[1] = s.PrefixItems[i]
		} else {
			subs[1] = s.Items2020
		}
		subs[2], subs[3] = s.Contains, s.UnevaluatedItems
		for _, sub := range subs {
			if sub == nil {
				continue
			}
			if err := m.inner(sub, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// arraySize returns the size of arr (see size), once per array.
func (m *meter) arraySize(arr []any) int {
	if m.sizes == nil {
		m.sizes = map[*any]int{}
	}
	n, ok := m.sizes[&arr[0]]
	if !ok {
		n = size(arr)
		m.sizes[&arr[0]] = n
	}
	return n
}

// stringWork is the steps the keywords of s take on the string v in
// proportion to its length. (contentSchema is never applied: the compiler
// does not assert content, so it is an annotation.)
func stringWork(s *jsonschema.Schema, v string) int {
	w := 0
	if s.MinLength != nil || s.MaxLength != nil {
		w += len(v) / 64
	}
	if s.Pattern != nil {
		w += 1 + len(v)/16
	}
	if s.Format != nil || s.ContentEncoding != nil || s.ContentMediaType != nil {
		w += 1 + len(v)/16
	}
	if s.Enum != nil {
		w += len(s.Enum.Values) * (len(v) / 64)
	}
	if s.Const != nil {
		w += len(v) / 64
	}
	return w
}

// numberWork is the steps the keywords of s take on the number v: the
// validator reads it as an exact fraction for every numeric keyword, enum
// and const, which costs more than its length once it has thousands of
// digits.
func numberWork(s *jsonschema.Schema, v json.Number) int {
	if s.Minimum == nil && s.Maximum == nil && s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil &&
		s.MultipleOf == nil && s.Enum == nil && s.Const == nil {
		return 0
	}
	n := len(v)
	w := 1 + n/16 + n*n/256
	if s.Enum != nil {
		w *= 1 + len(s.Enum.Values)
	}
	return w
}
