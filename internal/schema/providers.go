package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ErrNoNativeForm is returned (wrapped, with the reason) by
// AnthropicOutputFormat and GeminiResponseSchema for a schema the provider
// cannot take: recursive, or using references the provider does not
// resolve. The adapter then sends no native format (Instruction can go into
// the system prompt instead); local validation and re-asks work as always.
var ErrNoNativeForm = errors.New("the provider cannot enforce this schema natively")

// OpenAIFormat is OpenAI's `response_format` for structured output.
type OpenAIFormat struct {
	Type       string           `json:"type"` // always "json_schema"
	JSONSchema OpenAIJSONSchema `json:"json_schema"`
}

// OpenAIJSONSchema is the `json_schema` member of OpenAIFormat.
type OpenAIJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// OpenAIResponseFormat returns the response_format an openai-kind adapter
// sends: the schema as it is (less $schema and $comment), with strict true
// only when the schema fits OpenAI's strict subset (see OpenAIStrict) and
// false otherwise. name defaults to "response" and is reduced to OpenAI's
// alphabet. It fails only when schema is not JSON.
func OpenAIResponseFormat(name string, schema []byte) (*OpenAIFormat, error) {
	doc, err := decodeSchemaDoc(schema)
	if err != nil {
		return nil, err
	}
	doc = stripAnnotations(doc)
	raw, err := marshalJSON(doc)
	if err != nil {
		return nil, err
	}
	strict, _ := strictFit(doc)
	return &OpenAIFormat{
		Type:       "json_schema",
		JSONSchema: OpenAIJSONSchema{Name: openAIName(name), Schema: raw, Strict: strict},
	}, nil
}

// OpenAIStrict reports whether the schema fits OpenAI's strict subset: the
// root is an object schema; every object has additionalProperties false and
// lists all its properties as required; only the keywords OpenAI supports
// appear (no allOf, not, if/then/else, oneOf, patternProperties, minLength,
// ...), with supported formats and local references only; and the size
// limits hold (5000 properties, 10 levels of objects, 1000 enum values).
// When it does not, reason says why, for logs.
func OpenAIStrict(schema []byte) (ok bool, reason string) {
	doc, err := decodeSchemaDoc(schema)
	if err != nil {
		return false, err.Error()
	}
	return strictFit(stripAnnotations(doc))
}

// AnthropicFormat is the `format` member of Anthropic's `output_config`.
type AnthropicFormat struct {
	Type   string          `json:"type"` // always "json_schema"
	Schema json.RawMessage `json:"schema"`
}

// AnthropicOutputFormat returns the output_config.format an anthropic-kind
// adapter sends: the schema with the keywords Anthropic supports ($ref,
// $defs, definitions, type, anyOf, allOf, enum and const of plain values,
// properties, required, items, the common formats, pattern, description,
// minItems 0 or 1), additionalProperties false on every object as Anthropic
// requires, oneOf sent as anyOf, and every other keyword moved into the
// description as "Constraints: {...}" so the model still reads it. It fails
// with ErrNoNativeForm for recursive schemas and references other than JSON
// pointers into the schema, and with *SchemaError when schema is not JSON.
func AnthropicOutputFormat(schema []byte) (*AnthropicFormat, error) {
	raw, err := nativeForm(schema, anthropicDialect)
	if err != nil {
		return nil, err
	}
	return &AnthropicFormat{Type: "json_schema", Schema: raw}, nil
}

// GeminiFormat holds the two members of Gemini's `generationConfig` that
// ask for structured output.
type GeminiFormat struct {
	ResponseMIMEType   string          `json:"responseMimeType"` // always "application/json"
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
}

// GeminiResponseSchema returns what a gemini-kind adapter sets in
// generationConfig: responseMimeType application/json and responseJsonSchema,
// the schema with the keywords Gemini supports ($id, $defs, $ref, $anchor,
// type, format, title, description, enum of strings and numbers, items,
// prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf,
// properties, additionalProperties, required, propertyOrdering), const sent
// as a one-value enum, nothing but $-keywords beside a $ref (Gemini's rule),
// and every other keyword moved into the description. Errors are as for
// AnthropicOutputFormat.
func GeminiResponseSchema(schema []byte) (*GeminiFormat, error) {
	raw, err := nativeForm(schema, geminiDialect)
	if err != nil {
		return nil, err
	}
	return &GeminiFormat{ResponseMIMEType: "application/json", ResponseJSONSchema: raw}, nil
}

// Instruction returns a prompt that asks for JSON conforming to the schema,
// for an adapter that cannot send the schema natively (ErrNoNativeForm, or
// a provider without structured output).
func Instruction(schema []byte) string {
	return "Reply with only a JSON value that conforms to the JSON Schema below: " +
		"no explanation, no Markdown, nothing before or after the JSON.\n\n" + string(schema)
}

func decodeSchemaDoc(schema []byte) (any, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, &SchemaError{Message: "not valid JSON: " + jsonErrorText(err)}
	}
	return doc, nil
}

var openAINameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

func openAIName(name string) string {
	name = openAINameChars.ReplaceAllString(name, "_")
	if name == "" {
		return "response"
	}
	return name[:min(len(name), 64)]
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

// OpenAI's strict subset and limits.
var (
	openAIStrictKeywords = setOf("type", "properties", "required", "additionalProperties", "items",
		"enum", "const", "anyOf", "$ref", "$defs", "definitions", "description", "title",
		"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
		"multipleOf", "minItems", "maxItems")
	openAIStrictFormats = setOf("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
)

const (
	openAIMaxProperties = 5000
	openAIMaxNesting    = 10
	openAIMaxEnumValues = 1000
)

func setOf(ks ...string) map[string]bool {
	m := make(map[string]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}

// strictFit implements OpenAIStrict on a decoded schema.
func strictFit(doc any) (bool, string) {
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
			if !openAIStrictKeywords[k] {
				why = fmt.Sprintf("keyword %q at %s", k, quoteLocation(at))
				return false
			}
		}
		if f, ok := m["format"].(string); ok && !openAIStrictFormats[f] {
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
			if nesting++; nesting > openAIMaxNesting {
				why = fmt.Sprintf("objects nest deeper than %d levels at %s", openAIMaxNesting, quoteLocation(at))
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
	case props > openAIMaxProperties:
		return false, fmt.Sprintf("%d properties, more than %d", props, openAIMaxProperties)
	case enums > openAIMaxEnumValues:
		return false, fmt.Sprintf("%d enum values, more than %d", enums, openAIMaxEnumValues)
	}
	return true, ""
}

// dialect is what a provider accepts of JSON Schema.
type dialect struct {
	name string
	// keep reports whether the keyword k with value v stays as it is; the
	// others move into the description.
	keep func(k string, v any) bool
	// closeObjects sets additionalProperties false on every object.
	closeObjects bool
	// oneOfAsAnyOf sends oneOf as anyOf.
	oneOfAsAnyOf bool
	// constAsEnum sends a const string or number as a one-value enum.
	constAsEnum bool
	// refAlone keeps nothing but $-keywords beside a $ref.
	refAlone bool
	// structural are keywords the dialect cannot honour at all.
	structural []string
}

var (
	anthropicKeywords = setOf("$ref", "$defs", "definitions", "type", "anyOf", "allOf", "enum", "const",
		"properties", "required", "items", "format", "pattern", "description", "additionalProperties")
	anthropicFormats = setOf("date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid")

	anthropicDialect = &dialect{
		name: "Anthropic",
		keep: func(k string, v any) bool {
			switch k {
			case "enum":
				return allPlain(v, true)
			case "const":
				return allPlain([]any{v}, true)
			case "format":
				f, _ := v.(string)
				return anthropicFormats[f]
			case "minItems":
				return v == json.Number("0") || v == json.Number("1")
			case "items":
				_, tuple := v.([]any)
				return !tuple
			case "allOf":
				list, _ := v.([]any)
				return !slices.ContainsFunc(list, func(b any) bool {
					bm, _ := b.(map[string]any)
					_, ref := bm["$ref"]
					return ref
				})
			}
			return anthropicKeywords[k]
		},
		closeObjects: true,
		oneOfAsAnyOf: true,
		structural:   []string{"$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$id"},
	}

	geminiKeywords = setOf("$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description",
		"enum", "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf",
		"properties", "additionalProperties", "required", "propertyOrdering")

	geminiDialect = &dialect{
		name: "Gemini",
		keep: func(k string, v any) bool {
			switch k {
			case "enum":
				return allPlain(v, false)
			case "items":
				_, tuple := v.([]any)
				return !tuple
			}
			return geminiKeywords[k]
		},
		constAsEnum: true,
		refAlone:    true,
		structural:  []string{"$dynamicRef", "$dynamicAnchor", "$recursiveRef"},
	}
)

// allPlain reports whether v is a list of strings and numbers, and with
// more also booleans and nulls.
func allPlain(v any, more bool) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range list {
		switch e.(type) {
		case string, json.Number:
		case bool, nil:
			if !more {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// nativeForm decodes schema and rewrites it for the dialect.
func nativeForm(schema []byte, d *dialect) (json.RawMessage, error) {
	doc, err := decodeSchemaDoc(schema)
	if err != nil {
		return nil, err
	}
	doc = stripAnnotations(doc)
	if err := d.check(doc); err != nil {
		return nil, err
	}
	return marshalJSON(d.rewrite(doc))
}

// check refuses what the dialect cannot take in any form.
func (d *dialect) check(doc any) error {
	if at, ok := findJSON(doc, "", func(v any, at string) (string, bool) {
		m, _ := v.(map[string]any)
		for _, k := range d.structural {
			if _, ok := m[k]; ok && !(k == "$id" && at == "") {
				return pointer(at, k), true
			}
		}
		if r, ok := m["$ref"].(string); ok && !strings.HasPrefix(r, "#/") && r != "#" {
			return pointer(at, "$ref"), true
		}
		return "", false
	}); ok {
		return fmt.Errorf("%w: %s does not support the keyword at %s", ErrNoNativeForm, d.name, quoteLocation(at))
	}
	if at, ok := refCycle(doc); ok {
		return fmt.Errorf("%w: the schema is recursive (the reference at %s)", ErrNoNativeForm, quoteLocation(at))
	}
	return nil
}

// rewrite returns the schema v in the dialect's form.
func (d *dialect) rewrite(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	moved := map[string]any{}
	for k, e := range m {
		switch {
		case d.oneOfAsAnyOf && k == "oneOf" && m["anyOf"] == nil:
			k = "anyOf"
		case d.constAsEnum && k == "const" && m["enum"] == nil && allPlain([]any{e}, false):
			k, e = "enum", []any{e}
		}
		if k == "title" && !d.keep(k, e) {
			continue // an annotation only; the description says more
		}
		if !d.keep(k, e) {
			moved[k] = e
			continue
		}
		out[k] = e
	}
	if d.closeObjects && isObjectSchema(m) {
		if ap, ok := out["additionalProperties"]; ok && ap != false {
			moved["additionalProperties"] = ap
		}
		out["additionalProperties"] = false
	}
	if _, ok := out["$ref"]; ok && d.refAlone {
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
