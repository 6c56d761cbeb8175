package cli

import (
	"strings"
	"testing"
)

func TestHashKey(t *testing.T) {
	tests := []struct {
		name, stdin, want, wantWarning string
		wantCode                       int
	}{
		{"key with newline", "test\n", "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n", "only 4 characters", ExitOK},
		{"long key, no newline", strings.Repeat("k", 32), "sha256: 5e318f8cf9cbe249a30812b8ca132d691ded7a91991413558db5758575f5e01f\n", "", ExitOK},
		{"only the first line", strings.Repeat("k", 32) + "\nsecond line\n", "sha256: 5e318f8cf9cbe249a30812b8ca132d691ded7a91991413558db5758575f5e01f\n", "", ExitOK},
		{"empty", "\n", "", "empty key", ExitFailed},
		{"inner space", "two words\n", "", "spaces", ExitFailed},
		{"too long", strings.Repeat("k", 600), "", "longer than 512", ExitFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, []string{"hash-key"}, nil, tc.stdin)
			if r.code != tc.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", r.code, tc.wantCode, r.stderr)
			}
			if r.stdout != tc.want {
				t.Errorf("stdout %q, want %q", r.stdout, tc.want)
			}
			if !strings.Contains(r.stderr, tc.wantWarning) || (tc.wantWarning == "" && r.stderr != "") {
				t.Errorf("stderr %q, want %q", r.stderr, tc.wantWarning)
			}
			if key := strings.TrimSpace(tc.stdin); key != "" && strings.Contains(r.stderr, key) {
				t.Errorf("stderr %q repeats the key", r.stderr)
			}
		})
	}
	// A key on the command line would land in the shell history.
	if r := runCLI(t.Context(), t, []string{"hash-key", "my-key"}, nil, ""); r.code != ExitUsage || strings.Contains(r.stdout, "sha256") {
		t.Errorf("a key as an argument: exit %d, stdout %q; want a usage error", r.code, r.stdout)
	}
}
