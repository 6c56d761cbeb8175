// Package schema owns llmrelay's structured output, as pure logic with no
// gRPC types: compiling and caching the JSON Schemas clients send, parsing a
// model's reply and validating it, the re-ask message that lists what was
// wrong, the bookkeeping of validation retries (Session), partial objects for
// streaming (Partial), the deterministic instances the mock provider replies
// with (Instance), and lowering a schema into a provider's dialect (Lower):
// each adapter declares its provider's Dialect (which keywords it keeps,
// its strict subset) and owns the wire structs that carry the result;
// this package owns the rewriting and knows no provider.
//
// Errors are typed for internal/apierr: *SchemaError and ErrSchemaTooLarge
// for a bad request schema (INVALID_ARGUMENT), *ParseError for a reply that
// is not JSON, and *InvalidOutputError for output that stayed invalid
// (ABORTED, reason OUTPUT_VALIDATION_FAILED).
//
// Values passed around are those of encoding/json with UseNumber:
// map[string]any, []any, string, json.Number, bool and nil. They convert to
// google.protobuf.Value with structpb.NewValue as they are.
package schema
