package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNoNativeForm is returned (wrapped, with the reason) by Lower for a
// schema that a rewriting Dialect cannot take: recursive, or using
// references or keywords the provider does not resolve. The adapter then
// sends no native format (Instruction can go into the system prompt
// instead); local validation and re-asks work as always.
var ErrNoNativeForm = errors.New("the provider cannot enforce this schema natively")

// Dialect is what one provider's structured output accepts of JSON Schema:
// the provider-neutral description an adapter declares for its provider,
// and Lower applies. The adapter owns the decisions (which keywords, which
// subset is strict); this package owns the rewriting.
//
// The zero Dialect takes a schema as it is.
type Dialect struct {
	// Name names the provider in error messages, e.g. "Anthropic".
	Name string
	// Keywords are the keywords the provider takes. Every other keyword
	// moves into the schema's description as "Constraints: {...}", so the
	// model still reads it; a "title" the provider does not take is
	// dropped. Of the keywords it takes, "items" stays only as a single
	// schema (not draft 7's tuple form), "enum" and "const" only with
	// strings and numbers (and with EnumBoolsAndNull, booleans and
	// nulls), "format" only with one of Formats (any, when nil), and any
	// keyword only if Keep agrees.
	//
	// Nil takes every keyword: the schema goes as it is, and Lower refuses
	// nothing. Otherwise Lower refuses (ErrNoNativeForm) recursive schemas,
	// references other than JSON pointers into the schema, and the
	// Unsupported keywords.
	Keywords []string
	// Formats are the formats the provider takes; nil takes any.
	Formats []string
	// EnumBoolsAndNull lets enum and const hold booleans and nulls too.
	EnumBoolsAndNull bool
	// Keep, when not nil, is the provider's own rule on a keyword it takes
	// (k, in Keywords) with the value v (a decoded JSON value, see the
	// package comment): false moves it into the description.
	Keep func(k string, v any) bool
	// Unsupported are keywords the provider cannot honour in any form ($id
	// is allowed at the root).
	Unsupported []string
	// CloseObjects sets additionalProperties false on every object schema
	// (and moves a schema-valued additionalProperties into the description).
	CloseObjects bool
	// OneOfAsAnyOf sends oneOf as anyOf.
	OneOfAsAnyOf bool
	// ConstAsEnum sends a const string or number as a one-value enum.
	ConstAsEnum bool
	// RefAlone keeps nothing but $-keywords beside a $ref.
	RefAlone bool
	// Strict, when not nil, is the provider's strict subset: Lower reports
	// whether the lowered schema fits it.
	Strict *StrictSubset
}

// StrictSubset is a provider's strict structured-output mode: the root is
// an object schema without anyOf; every object sets additionalProperties
// false and lists all its properties as required; only Keywords appear,
// with only Formats, local references and no tuple items; and objects nest
// at most MaxNesting levels, with at most MaxProperties properties and
// MaxEnumValues enum values in all.
type StrictSubset struct {
	Keywords      []string
	Formats       []string
	MaxProperties int
	MaxNesting    int
	MaxEnumValues int
}

// Lowered is a schema in a provider's dialect.
type Lowered struct {
	// Schema is the schema to send, as compact JSON without $schema and
	// $comment anywhere (providers do not need them; some refuse them).
	Schema json.RawMessage
	// Strict says the schema fits the dialect's StrictSubset. When it does
	// not, NotStrict says why, for logs.
	Strict    bool
	NotStrict string
}

// Lower returns schema in the dialect d. It fails with a *SchemaError when
// schema is not JSON, and with ErrNoNativeForm as Dialect.Keep says.
func Lower(schema []byte, d *Dialect) (Lowered, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return Lowered{}, &SchemaError{Message: "not valid JSON: " + jsonErrorText(err)}
	}
	doc = stripAnnotations(doc)
	if d.Keywords != nil {
		if err := d.check(doc); err != nil {
			return Lowered{}, err
		}
		doc = d.rewrite(doc)
		if at, ok := danglingRef(doc); ok {
			// RefAlone dropped what a reference points at (a draft-7
			// "definitions" beside a root $ref).
			return Lowered{}, fmt.Errorf("%w: %s would leave the reference at %s pointing to nothing", ErrNoNativeForm, d.Name, quoteLocation(at))
		}
	}
	raw, err := marshalJSON(doc)
	if err != nil {
		return Lowered{}, err
	}
	out := Lowered{Schema: raw}
	if d.Strict != nil {
		out.Strict, out.NotStrict = d.Strict.fit(doc)
	}
	return out, nil
}

// plainList reports whether v is a list of strings and numbers and, with
// boolsAndNull, also booleans and nulls: the enum values most providers
// take.
func plainList(v any, boolsAndNull bool) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range list {
		switch e.(type) {
		case string, json.Number:
		case bool, nil:
			if !boolsAndNull {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Instruction returns a prompt that asks for JSON conforming to the schema,
// for an adapter that cannot send the schema natively (ErrNoNativeForm, or
// a provider without structured output).
func Instruction(schema []byte) string {
	return "Reply with only a JSON value that conforms to the JSON Schema below: " +
		"no explanation, no Markdown, nothing before or after the JSON.\n\n" + string(schema)
}

// subschemaKind says how a keyword holds subschemas.
type subschemaKind uint8

const (
	oneSchema  subschemaKind = iota + 1 // the value is a schema
	schemaMap                           // an object of schemas
	schemaList                          // an array of schemas
)

var subschemaKeywords = map[string]subschemaKind{
	"items": oneSchema, "additionalProperties": oneSchema, "not": oneSchema, "if": oneSchema,
	"then": oneSchema, "else": oneSchema, "contains": oneSchema, "propertyNames": oneSchema,
	"unevaluatedItems": oneSchema, "unevaluatedProperties": oneSchema, "additionalItems": oneSchema,
	"contentSchema": oneSchema,
	"properties":    schemaMap, "patternProperties": schemaMap, "$defs": schemaMap,
	"definitions": schemaMap, "dependentSchemas": schemaMap,
	"allOf": schemaList, "anyOf": schemaList, "oneOf": schemaList, "prefixItems": schemaList,
}

// eachSubschema calls fn for every subschema directly in the schema m.
func eachSubschema(m map[string]any, at string, fn func(sub any, at string)) {
	for _, k := range sortedKeys(m) {
		switch v := m[k]; subschemaKeywords[k] {
		case oneSchema:
			if list, ok := v.([]any); ok { // draft 7's tuple items
				for i, s := range list {
					fn(s, pointerIndex(pointer(at, k), i))
				}
				continue
			}
			fn(v, pointer(at, k))
		case schemaMap:
			if mm, ok := v.(map[string]any); ok {
				for _, name := range sortedKeys(mm) {
					fn(mm[name], pointer(at, k, name))
				}
			}
		case schemaList:
			if list, ok := v.([]any); ok {
				for i, s := range list {
					fn(s, pointerIndex(pointer(at, k), i))
				}
			}
		}
	}
}

// mapSubschemas returns a copy of the schema m with fn applied to every
// subschema directly in it.
func mapSubschemas(m map[string]any, fn func(any) any) map[string]any {
	mapList := func(list []any) []any {
		out := make([]any, len(list))
		for i, s := range list {
			out[i] = fn(s)
		}
		return out
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch subschemaKeywords[k] {
		case oneSchema:
			if list, ok := v.([]any); ok { // draft 7's tuple items
				v = mapList(list)
			} else {
				v = fn(v)
			}
		case schemaMap:
			if mm, ok := v.(map[string]any); ok {
				c := make(map[string]any, len(mm))
				for name, s := range mm {
					c[name] = fn(s)
				}
				v = c
			}
		case schemaList:
			if list, ok := v.([]any); ok {
				v = mapList(list)
			}
		}
		out[k] = v
	}
	return out
}

// stripAnnotations removes $schema and $comment everywhere: providers do not
// need them and some refuse them.
func stripAnnotations(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	return mapSubschemas(without(without(m, "$schema"), "$comment"), stripAnnotations)
}

// isObjectSchema reports whether m describes objects.
func isObjectSchema(m map[string]any) bool {
	if ts := typeList(m["type"]); len(ts) > 0 {
		return slices.Contains(ts, "object")
	}
	for _, k := range []string{"properties", "additionalProperties", "patternProperties", "required"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func setOf(ks ...string) map[string]bool {
	m := make(map[string]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}

// fit reports whether the decoded schema doc fits the subset, and if not,
// why.
func (sub *StrictSubset) fit(doc any) (bool, string) {
	keywords, formats := setOf(sub.Keywords...), setOf(sub.Formats...)
	root, ok := doc.(map[string]any)
	if !ok || root["type"] != "object" {
		return false, "the root is not a schema with type \"object\""
	}
	if _, ok := root["anyOf"]; ok {
		return false, "the root has anyOf"
	}
	var props, enums int
	var why string
	var check func(v any, at string, nesting int) bool
	check = func(v any, at string, nesting int) bool {
		m, ok := v.(map[string]any)
		if !ok {
			why = fmt.Sprintf("the boolean schema at %s", quoteLocation(at))
			return false
		}
		for _, k := range sortedKeys(m) {
			if !keywords[k] {
				why = fmt.Sprintf("keyword %q at %s", k, quoteLocation(at))
				return false
			}
		}
		if f, ok := m["format"].(string); ok && !formats[f] {
			why = fmt.Sprintf("format %q at %s", f, quoteLocation(at))
			return false
		}
		if r, ok := m["$ref"].(string); ok && !strings.HasPrefix(r, "#") {
			why = fmt.Sprintf("reference %q at %s", r, quoteLocation(at))
			return false
		}
		if _, ok := m["items"].([]any); ok {
			why = fmt.Sprintf("tuple items at %s", quoteLocation(at))
			return false
		}
		if e, ok := m["enum"].([]any); ok {
			enums += len(e)
		}
		if isObjectSchema(m) {
			if nesting++; nesting > sub.MaxNesting {
				why = fmt.Sprintf("objects nest deeper than %d levels at %s", sub.MaxNesting, quoteLocation(at))
				return false
			}
			if m["additionalProperties"] != false {
				why = fmt.Sprintf("the object at %s does not set additionalProperties false", quoteLocation(at))
				return false
			}
			pm, _ := m["properties"].(map[string]any)
			props += len(pm)
			required := stringList(m["required"])
			for _, name := range sortedKeys(pm) {
				if !slices.Contains(required, name) {
					why = fmt.Sprintf("property %q at %s is not required", name, quoteLocation(at))
					return false
				}
			}
		}
		fits := true
		eachSubschema(m, at, func(sub any, subAt string) {
			if sub == false && strings.HasSuffix(subAt, "/additionalProperties") {
				return // checked above
			}
			if fits && !check(sub, subAt, nesting) {
				fits = false
			}
		})
		return fits
	}
	if !check(root, "", 0) {
		return false, why
	}
	switch {
	case props > sub.MaxProperties:
		return false, fmt.Sprintf("%d properties, more than %d", props, sub.MaxProperties)
	case enums > sub.MaxEnumValues:
		return false, fmt.Sprintf("%d enum values, more than %d", enums, sub.MaxEnumValues)
	}
	return true, ""
}

// check refuses what the dialect cannot take in any form.
func (d *Dialect) check(doc any) error {
	if at, ok := findJSON(doc, "", func(v any, at string) (string, bool) {
		m, _ := v.(map[string]any)
		for _, k := range d.Unsupported {
			if _, ok := m[k]; ok && !(k == "$id" && at == "") {
				return pointer(at, k), true
			}
		}
		if r, ok := m["$ref"].(string); ok && !strings.HasPrefix(r, "#/") && r != "#" {
			return pointer(at, "$ref"), true
		}
		return "", false
	}); ok {
		return fmt.Errorf("%w: %s does not support the keyword at %s", ErrNoNativeForm, d.Name, quoteLocation(at))
	}
	if at, ok := refCycle(doc); ok {
		return fmt.Errorf("%w: the schema is recursive (the reference at %s)", ErrNoNativeForm, quoteLocation(at))
	}
	return nil
}

// keeps reports whether the keyword k with the value v stays as it is (see
// Dialect.Keywords).
func (d *Dialect) keeps(k string, v any) bool {
	if !slices.Contains(d.Keywords, k) {
		return false
	}
	switch k {
	case "items":
		if _, tuple := v.([]any); tuple {
			return false
		}
	case "enum":
		if !plainList(v, d.EnumBoolsAndNull) {
			return false
		}
	case "const":
		if !plainList([]any{v}, d.EnumBoolsAndNull) {
			return false
		}
	case "format":
		if f, _ := v.(string); d.Formats != nil && !slices.Contains(d.Formats, f) {
			return false
		}
	}
	return d.Keep == nil || d.Keep(k, v)
}

// rewrite returns the schema v in the dialect's form.
func (d *Dialect) rewrite(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	moved := map[string]any{}
	for k, e := range m {
		switch {
		case d.OneOfAsAnyOf && k == "oneOf" && m["anyOf"] == nil:
			k = "anyOf"
		case d.ConstAsEnum && k == "const" && m["enum"] == nil && plainList([]any{e}, false):
			k, e = "enum", []any{e}
		}
		if k == "title" && !d.keeps(k, e) {
			continue // an annotation only; the description says more
		}
		if !d.keeps(k, e) {
			moved[k] = e
			continue
		}
		out[k] = e
	}
	if d.CloseObjects && isObjectSchema(m) {
		if ap, ok := out["additionalProperties"]; ok && ap != false {
			moved["additionalProperties"] = ap
		}
		out["additionalProperties"] = false
	}
	if _, ok := out["$ref"]; ok && d.RefAlone {
		for k := range out {
			if !strings.HasPrefix(k, "$") {
				delete(out, k)
			}
		}
		return mapSubschemas(out, d.rewrite)
	}
	if len(moved) > 0 {
		text, _ := marshalJSON(moved)
		desc, _ := out["description"].(string)
		if desc != "" {
			desc += "\n"
		}
		out["description"] = desc + "Constraints: " + string(text)
	}
	return mapSubschemas(out, d.rewrite)
}

// danglingRef reports a JSON pointer reference in doc that points to
// nothing.
func danglingRef(doc any) (string, bool) {
	g := &generator{root: doc}
	return findJSON(doc, "", func(v any, at string) (string, bool) {
		m, _ := v.(map[string]any)
		r, ok := m["$ref"].(string)
		if ok && g.lookup(r) == nil {
			return pointer(at, "$ref"), true
		}
		return "", false
	})
}

// refCycle reports a reference that leads back to a schema that contains
// it, following JSON pointer references from the root.
func refCycle(doc any) (string, bool) {
	state := map[string]uint8{} // 1 visiting, 2 done
	var visit func(target string) (string, bool)
	visit = func(target string) (string, bool) {
		switch state[target] {
		case 1:
			return target, true
		case 2:
			return "", false
		}
		state[target] = 1
		node := (&generator{root: doc}).lookup("#" + target)
		at, cyclic := findJSON(node, target, func(v any, at string) (string, bool) {
			m, _ := v.(map[string]any)
			r, ok := m["$ref"].(string)
			if !ok || !strings.HasPrefix(r, "#") {
				return "", false
			}
			rt := r[1:]
			if rt == target || strings.HasPrefix(target, rt+"/") || rt == "" {
				return pointer(at, "$ref"), true
			}
			if _, c := visit(rt); c {
				return pointer(at, "$ref"), true
			}
			return "", false
		})
		state[target] = 2
		return at, cyclic
	}
	return visit("")
}
