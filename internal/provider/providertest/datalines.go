package providertest

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// DataLines returns the data of every `data:` line of the calling
// package's stream fixtures matching pattern (under testdata, e.g.
// "*.sse" or "recorded/*.sse"): the seeds of a fast decoder's fuzz test,
// and the chunks it must take.
func DataLines(tb testing.TB, pattern string) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no fixtures testdata/%s: %v", pattern, err)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				out = append(out, bytes.Clone(data))
			}
		}
	}
	return out
}
