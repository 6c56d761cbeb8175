package provider_test

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestHTTPClass(t *testing.T) {
	tests := []struct {
		name   string
		status int
		byType provider.Class
		want   provider.Class
	}{
		{"the status decides", 503, provider.ClassRejected, provider.ClassOverloaded},
		{"a 429 that names a spent quota", 429, provider.ClassQuotaExhausted, provider.ClassQuotaExhausted},
		{"a 429 with a rate-limit type", 429, provider.ClassRateLimited, provider.ClassRateLimited},
		{"a quota type does not change another status", 400, provider.ClassQuotaExhausted, provider.ClassRejected},
		{"402 is the account's balance, whatever the type", 402, provider.ClassRejected, provider.ClassQuotaExhausted},
		{"402 without a type", 402, provider.ClassUnknown, provider.ClassQuotaExhausted},
		{"529 is overloaded", 529, provider.ClassUnknown, provider.ClassOverloaded},
		{"no status: the type decides", 0, provider.ClassServerError, provider.ClassServerError},
		{"a status that is not an error", 200, provider.ClassServerError, provider.ClassUnknown},
		{"404 is an unknown model", 404, provider.ClassUnknown, provider.ClassNotFound},
		{"a 400 whose type names an unknown model", 400, provider.ClassNotFound, provider.ClassNotFound},
		{"a not-found type does not change a 5xx", 500, provider.ClassNotFound, provider.ClassServerError},
		{"a 400 whose type says the model's output was refused", 400, provider.ClassInvalidOutput, provider.ClassInvalidOutput},
		{"an invalid-output type does not change a 5xx", 503, provider.ClassInvalidOutput, provider.ClassOverloaded},
		{"a 400 whose type says the context window is exceeded", 400, provider.ClassContextLength, provider.ClassContextLength},
		{"a 413 whose type says the context window is exceeded", 413, provider.ClassContextLength, provider.ClassContextLength},
		{"a context-length type does not change a 429", 429, provider.ClassContextLength, provider.ClassRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := provider.HTTPClass(tt.status, tt.byType); got != tt.want {
				t.Errorf("HTTPClass(%d, %v) = %v, want %v", tt.status, tt.byType, got, tt.want)
			}
		})
	}
}

func TestFailureClass(t *testing.T) {
	tests := []struct {
		name string
		err  provider.Error
		want provider.Class
	}{
		{"the adapter's class", provider.Error{Kind: provider.KindHTTP, Status: 503, Class: provider.ClassRejected}, provider.ClassRejected},
		{"an unclassified status", provider.Error{Kind: provider.KindHTTP, Status: 401}, provider.ClassAuth},
		{"an unclassified transport failure", provider.Error{Kind: provider.KindTransport}, provider.ClassTransport},
		{"an unclassified in-stream error", provider.Error{Kind: provider.KindInStream, Status: 503, Type: "overloaded_error"}, provider.ClassUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.FailureClass(); got != tt.want {
				t.Errorf("FailureClass() = %v, want %v", got, tt.want)
			}
		})
	}
}
