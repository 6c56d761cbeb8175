package httpapi

import (
	"testing"
)

// TestEmbeddingsRequestRefusals: an embeddings request the door cannot
// take is refused as the other doors refuse theirs, naming the member at
// fault, in the client's terms (no Go type names), and a body with more
// than one JSON value is not half read.
func TestEmbeddingsRequestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, body         string
		wantParam, wantMsg string
	}{
		{"dimensions not whole", `{"model":"mock/echo","input":"x","dimensions":4.5}`,
			"dimensions", "dimensions: must be a whole number from 1 to 65536"},
		{"dimensions a string", `{"model":"mock/echo","input":"x","dimensions":"4"}`,
			"dimensions", "dimensions: must be a whole number from 1 to 65536"},
		{"model not a string", `{"model":7,"input":"x"}`,
			"model", "model: must be a string"},
		{"encoding_format not a string", `{"model":"mock/echo","input":"x","encoding_format":1}`,
			"encoding_format", "encoding_format: must be a string"},
		{"user not a string", `{"model":"mock/echo","input":"x","user":{}}`,
			"user", "user: must be a string"},
		{"a null input item", `{"model":"mock/echo","input":["a",null]}`,
			"input[1]", "input[1]: must be a string: llmrelay embeds text, not token arrays (the token ids of one model mean nothing to another a route may fall back to)"},
		{"trailing data", `{"model":"mock/echo","input":"x"} {"input":"y"}`,
			"", "the request body is not valid JSON (at byte 35): invalid character '{' after top-level value"},
		{"an empty body", ``,
			"", "the request body is not valid JSON (at byte 0): unexpected end of JSON input"},
		{"not an object", `["x"]`,
			"", "the request body must not be a JSON array"},
		{"an unknown member", `{"model":"mock/echo","input":"x","foo":1}`,
			"foo", "foo: llmrelay does not know this member of an embeddings request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _, fail := decodeEmbeddings([]byte(tc.body))
			if fail == nil {
				t.Fatalf("decoded %v, want a refusal", req)
			}
			if fail.status != 400 || fail.param != tc.wantParam || fail.message != tc.wantMsg {
				t.Fatalf("refused %d param %q message %q, want 400 %q %q", fail.status, fail.param, fail.message, tc.wantParam, tc.wantMsg)
			}
		})
	}
}
