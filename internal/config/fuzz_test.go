package config

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzParse feeds arbitrary bytes to the config parser: it never panics;
// it returns a configuration or Problems, each problem with a message; and
// a configuration it accepts prints (YAML) as a file that loads as the same
// configuration.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "listen: 127.0.0.1:1\n", "listn: x\n", "shutdown_grace: 30\n", "retry: {max_backoff: soon}\n",
		"providers: [{name: a, kind: mock, headers: {X: y}, timeout: 1m}]\n", keysYAML,
		"deadlines: &d {max: 1h}\nretry: *d\n", "auth:\n  keys:\n    - sha256: sha256: ab\n", "- a\n- b\n", "{",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Parse(%q) = %v (%T), want Problems", data, err, err)
			}
			for _, p := range ps {
				if p.Problem == "" {
					t.Fatalf("Parse(%q): a problem without a message: %#v", data, p)
				}
			}
			return
		}
		out, err := cfg.YAML()
		if err != nil {
			t.Fatalf("YAML of %q: %v", data, err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) accepted, but its YAML does not load: %v\n%s", data, err, out)
		}
		if !cmp.Equal(cfg, again, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(Config{})) {
			t.Fatalf("Parse(%q) and the YAML it prints load differently:\n%s", data, out)
		}
	})
}
