package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestHashKey(t *testing.T) {
	tests := []struct {
		name, stdin, want, wantWarning string
		wantErr                        bool
	}{
		{"key with newline", "test\n", "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n", "only 4 characters", false},
		{"long key, no newline", strings.Repeat("k", 32), "sha256: 5e318f8cf9cbe249a30812b8ca132d691ded7a91991413558db5758575f5e01f\n", "", false},
		{"only the first line", strings.Repeat("k", 32) + "\nsecond line\n", "sha256: 5e318f8cf9cbe249a30812b8ca132d691ded7a91991413558db5758575f5e01f\n", "", false},
		{"empty", "\n", "", "", true},
		{"inner space", "two words\n", "", "", true},
		{"too long", strings.Repeat("k", 600), "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(t.Context(), []string{"hash-key"}, strings.NewReader(tc.stdin), &out, &errOut, func(string) string { return "" })
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if out.String() != tc.want {
				t.Errorf("stdout %q, want %q", out.String(), tc.want)
			}
			if !strings.Contains(errOut.String(), tc.wantWarning) || (tc.wantWarning == "" && errOut.Len() > 0) {
				t.Errorf("stderr %q, want %q", errOut.String(), tc.wantWarning)
			}
			if err != nil && strings.Contains(err.Error(), strings.TrimSpace(tc.stdin)) && strings.TrimSpace(tc.stdin) != "" {
				t.Errorf("error %q repeats the key", err)
			}
		})
	}
	if err := run(t.Context(), []string{"hash-key", "my-key"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil); err == nil {
		t.Error("a key on the command line (it would land in the shell history) was accepted")
	}
}
