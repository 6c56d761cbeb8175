package providertest

import (
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// ErrorCase is one row of an adapter's error-table test.
type ErrorCase struct {
	Name string
	// Status is the HTTP status of an error response; 0 for an error object
	// that arrived inside a stream.
	Status int
	// Body is the error response's body, or the stream's error object.
	Body string
	// Want is the class the adapter's error table must give the error.
	Want provider.Class
}

// CheckErrorTable checks an adapter's error table: each error response,
// read with parse (the adapter's httpx.ErrorBodyParser), and each
// in-stream error object, which inStream decodes from a stream that
// carries it, gets the case's class.
func CheckErrorTable(t *testing.T, cases []ErrorCase, parse func([]byte, *provider.Error), inStream func(object []byte) error) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var got *provider.Error
			if tc.Status == 0 {
				got = ProviderError(inStream([]byte(tc.Body)))
			} else {
				got = &provider.Error{Kind: provider.KindHTTP, Status: tc.Status}
				parse([]byte(tc.Body), got)
			}
			if got == nil || got.Class != tc.Want {
				t.Errorf("class of %s = %+v, want %v", tc.Body, got, tc.Want)
			}
		})
	}
}

// NativeForm is one row of an adapter's dialect test: a schema and whether
// the provider takes it natively.
type NativeForm struct {
	Name, Schema string
	Taken        bool
}

// CheckNativeForms checks which schemas the dialect lowers and which it
// refuses with schema.ErrNoNativeForm.
func CheckNativeForms(t *testing.T, d *schema.Dialect, cases []NativeForm) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			_, err := schema.Lower([]byte(tc.Schema), d)
			if (err == nil) != tc.Taken || err != nil && !errors.Is(err, schema.ErrNoNativeForm) {
				t.Errorf("Lower: %v, want taken = %v", err, tc.Taken)
			}
		})
	}
}

// CheckLowered lowers the schema in with the dialect d and checks that the
// result is the schema want (the same JSON value), and a valid schema. It
// returns the lowered schema.
func CheckLowered(t *testing.T, d *schema.Dialect, in, want string) []byte {
	t.Helper()
	got, err := schema.Lower([]byte(in), d)
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	if !SameJSON(string(got.Schema), want) {
		t.Fatalf("Lower =\n%s\nwant\n%s", got.Schema, want)
	}
	if _, err := schema.NewCache(schema.Config{}).Compile(got.Schema); err != nil {
		t.Fatalf("the lowered schema is not a valid schema: %v", err)
	}
	return got.Schema
}
