package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// frame is the buffer one stream writes its server-sent events into: a
// stream appends an event's bytes, writes them and resets it, so a
// streamed reply allocates nothing per delta once the buffer has grown to
// its largest event.
type frame struct{ b []byte }

// reset empties the buffer and returns it for appending.
func (f *frame) reset() []byte { f.b = f.b[:0]; return f.b }

// appendEvent appends an SSE event line ("event: name\n"), for formats that
// name their events (Anthropic's).
func appendEvent(b []byte, name string) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	return append(b, '\n')
}

// appendUint appends n in decimal.
func appendUint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }

// appendKeyString appends `"key":` and s as a JSON string.
func appendKeyString(b []byte, key, s string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return appendString(b, s)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does
// with HTML escaping off: quotes, backslashes and control characters
// escaped, U+2028 and U+2029 escaped (JavaScript reads them as line
// ends), and each byte of invalid UTF-8 replaced by U+FFFD. It allocates
// nothing when b has room.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// The request side: both formats decode a JSON object key by key, so a key
// the door does not know is refused by name, as the vendors' own APIs
// refuse it, rather than dropped.

// isNull reports whether a raw JSON value is absent or null: either means
// "not set" in both formats.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// objectFields decodes a JSON object into its raw members.
func objectFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, jsonProblem(err)
	}
	if fields == nil {
		return nil, errors.New("must be a JSON object")
	}
	return fields, nil
}

// decodeStrict decodes raw into v, refusing members v does not have.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	return nil
}

// jsonProblem rewords encoding/json's errors for a client, without the
// Go type names they carry.
func jsonProblem(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := te.Field
		if where == "" {
			return fmt.Errorf("must not be a JSON %s", te.Value)
		}
		return fmt.Errorf("%s must not be a JSON %s", where, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("is not valid JSON (at byte %d): %v", se.Offset, err)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// sortedKeys returns an object's member names in order, so that a request
// with two problems is always refused for the same one.
func sortedKeys(fields map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(fields))
}

// structOf decodes a JSON object (a JSON Schema, a tool's parameters)
// into a protobuf Struct.
func structOf(raw json.RawMessage) (*structpb.Struct, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, jsonProblem(err)
	}
	if m == nil {
		return nil, errors.New("must be a JSON object")
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// valueOf decodes any JSON value into a protobuf Value.
func valueOf(raw json.RawMessage) (*structpb.Value, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, jsonProblem(err)
	}
	return structpb.NewValue(v)
}

// stringOrStrings decodes a value that is a string or a list of strings
// (OpenAI's `stop`).
func stringOrStrings(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("must be a string or a list of strings")
	}
	return many, nil
}

// wholeNumber decodes a whole number for field, a uint32 field of the
// engine's request, held to the range the contract's rule gives that
// field (its buf.validate gte and lte), which the engine's validation
// enforces: the client is told the range the request will be held to,
// whatever the wire value was, from the one definition of it.
func wholeNumber(raw json.RawMessage, field protoreflect.FieldDescriptor) (uint32, error) {
	lo, hi := uint32Range(field)
	n, ok := integerIn(raw, int64(lo), int64(hi))
	if !ok {
		return 0, fmt.Errorf("must be a whole number from %d to %d", lo, hi)
	}
	return uint32(n), nil
}

// integerIn decodes a JSON number whose value is a whole number from lo
// to hi. JSON has one kind of number, so 1000, 1000.0, 1e3 and 1.0e3 are
// all a thousand (Python clients that compute a limit as a float send
// 1000.0), and -0 is 0. ok is false for any other value: a fraction
// (10.5, or 1.00000000000000001, which a float64 would round to 1), a
// number past the range (1e400 included), a string (even "1000") or
// anything else. It reads the number's digits, not a float64, so that
// neither rounding nor a long exponent costs or decides anything.
func integerIn(raw json.RawMessage, lo, hi int64) (n int64, ok bool) {
	s := string(bytes.Trim(raw, " \t\r\n"))
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	// The number's parts, as JSON's grammar has them: int, frac, exp.
	i := digitsOf(s)
	whole := s[:i]
	if i == 0 || i > 1 && whole[0] == '0' {
		return 0, false
	}
	s = s[i:]
	var frac string
	if strings.HasPrefix(s, ".") {
		i = digitsOf(s[1:])
		if i == 0 {
			return 0, false
		}
		frac, s = s[1:1+i], s[1+i:]
	}
	exp := 0
	if s != "" {
		if s[0] != 'e' && s[0] != 'E' {
			return 0, false
		}
		s = s[1:]
		expNeg := strings.HasPrefix(s, "-")
		if expNeg || strings.HasPrefix(s, "+") {
			s = s[1:]
		}
		if digitsOf(s) != len(s) || s == "" {
			return 0, false
		}
		// An exponent of more than 9 digits moves any digit but a zero
		// past the range or into the fraction (a request holds fewer
		// digits than that): 10^9 stands for it.
		if e := strings.TrimLeft(s, "0"); len(e) > 9 {
			exp = 1e9
		} else {
			exp, _ = strconv.Atoi("0" + e)
		}
		if expNeg {
			exp = -exp
		}
	}
	// The value is digits × 10^exp: its significant digits, without the
	// zeros that lead or trail them.
	digits := strings.TrimLeft(whole+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	switch {
	case trimmed == "":
		n = 0
	case exp < 0:
		return 0, false // a fraction
	case len(trimmed)+exp > 19:
		return 0, false // past int64
	default:
		var err error
		if n, err = strconv.ParseInt(trimmed+strings.Repeat("0", exp), 10, 64); err != nil {
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, n >= lo && n <= hi
}

// digitsOf returns how many ASCII digits s starts with.
func digitsOf(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// uint32Range returns the bounds of field's buf.validate uint32 rule, and
// uint32's own where the rule sets none.
func uint32Range(field protoreflect.FieldDescriptor) (lo, hi uint32) {
	lo, hi = 0, math.MaxUint32
	rules, _ := proto.GetExtension(field.Options(), validate.E_Field).(*validate.FieldRules)
	r := rules.GetUint32()
	if r.HasGte() {
		lo = r.GetGte()
	} else if r.HasGt() {
		lo = r.GetGt() + 1
	}
	if r.HasLte() {
		hi = r.GetLte()
	} else if r.HasLt() {
		hi = r.GetLt() - 1
	}
	return lo, hi
}

// The uint32 fields of the engine's request that the doors decode from a
// wire integer.
var (
	fieldMaxOutputTokens = (&llmrelayv1.GenerationConfig{}).ProtoReflect().Descriptor().Fields().ByName("max_output_tokens")
	fieldMaxToolTurns    = (&llmrelayv1.GenerateRequest{}).ProtoReflect().Descriptor().Fields().ByName("max_tool_turns")
)

// extension is the `llmrelay` member both formats accept in a request, for
// what only llmrelay offers: the request fields of llmrelay's own API that
// the vendor's format has no place for.
type extension struct {
	// ProviderOptions are GenerateRequest.provider_options: for example
	// the mock provider's scripted faults.
	ProviderOptions json.RawMessage `json:"provider_options"`
	// FallbackModels are GenerateRequest.fallback_models.
	FallbackModels []string `json:"fallback_models"`
	// ServerTools and MaxToolTurns are GenerateRequest.server_tools and
	// max_tool_turns: tools llmrelay runs for the model (docs/tools.md).
	ServerTools  []string        `json:"server_tools"`
	MaxToolTurns json.RawMessage `json:"max_tool_turns"`
}

// apply adds the extension's fields to req. Its provider_options join
// those the format's own fields set (seed, thinking, ...), which they may
// not repeat.
func (x *extension) apply(req *llmrelayv1.GenerateRequest) error {
	req.FallbackModels, req.ServerTools = x.FallbackModels, x.ServerTools
	if !isNull(x.MaxToolTurns) {
		n, err := wholeNumber(x.MaxToolTurns, fieldMaxToolTurns)
		if err != nil {
			return &paramError{".max_tool_turns", err.Error()}
		}
		req.MaxToolTurns = &n
	}
	if isNull(x.ProviderOptions) {
		return nil
	}
	opts, err := structOf(x.ProviderOptions)
	if err != nil {
		return fmt.Errorf("provider_options: %w", err)
	}
	if req.ProviderOptions == nil {
		req.ProviderOptions = opts
		return nil
	}
	for k, v := range opts.GetFields() {
		if _, dup := req.ProviderOptions.Fields[k]; dup {
			return fmt.Errorf("provider_options.%s: already set by the request's own %s", k, k)
		}
		req.ProviderOptions.Fields[k] = v
	}
	return nil
}

// setOption puts one of the format's own fields into the request's
// provider_options under the same name, for the provider to read.
func setOption(req *llmrelayv1.GenerateRequest, key string, raw json.RawMessage) error {
	v, err := valueOf(raw)
	if err != nil {
		return err
	}
	if req.ProviderOptions == nil {
		req.ProviderOptions = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	req.ProviderOptions.Fields[key] = v
	return nil
}

// decodeAs decodes raw into v, or says what raw must be.
func decodeAs(raw json.RawMessage, v any, must string) error {
	if json.Unmarshal(raw, v) != nil {
		return errors.New(must)
	}
	return nil
}
