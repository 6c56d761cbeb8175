package providertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// FuzzDecode is an adapter's decoder fuzz target. Its seed corpus is every
// stream fixture of the calling package (testdata/*.sse, and the recorded
// real streams in testdata/recorded/*.sse), plus whatever `go test -fuzz`
// keeps in testdata/fuzz. For any body, decoding it must:
//
//   - not panic;
//   - end cleanly or with a *provider.Error, never another error;
//   - number tool calls from 0 without gaps, and send a call's id and name
//     in its first fragment only (they may be empty there when the provider
//     sent none: that is the provider's doing, not the decoder's);
//   - number reasoning blocks from 0 without gaps, with the format in a
//     block's first fragment only;
//   - produce no more text and reasoning than the body holds;
//   - not depend on how the body arrives: read one byte at a time, it gives
//     the same events and the same end.
//
// extra is the adapter's non-standard line field (see httpx.GetReader).
func FuzzDecode(f *testing.F, extra string, newDec func() httpx.Decoder) {
	f.Helper()
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no stream fixtures in testdata to seed the corpus (%v)", err)
	}
	recorded, _ := filepath.Glob(filepath.Join("testdata", "recorded", "*.sse"))
	seeds = append(seeds, recorded...)
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		whole := decodeFrom(bytes.NewReader(body), extra, newDec())
		if whole.Err != nil && ProviderError(whole.Err) == nil {
			t.Fatalf("the stream ended with %T %v, want io.EOF or a *provider.Error", whole.Err, whole.Err)
		}
		if pe := ProviderError(whole.Err); pe != nil && (pe.Kind < provider.KindHTTP || pe.Kind > provider.KindProtocol) {
			t.Fatalf("a *provider.Error of unknown kind %d", pe.Kind)
		}
		if err := checkToolCalls(whole.Events); err != "" {
			t.Fatal(err)
		}
		for _, v := range whole.Violations {
			if strings.HasPrefix(v, "reasoning") {
				t.Fatal(v)
			}
		}
		reasoning := 0
		for _, b := range whole.Reasoning {
			reasoning += len(b.Text)
		}
		if len(whole.Text)+reasoning+len(whole.Refusal) > len(body) {
			t.Fatalf("%d bytes of text, reasoning and refusal from a %d-byte body", len(whole.Text)+reasoning+len(whole.Refusal), len(body))
		}
		bytewise := decodeFrom(iotest.OneByteReader(bytes.NewReader(body)), extra, newDec())
		if !reflect.DeepEqual(bytewise.Events, whole.Events) || errText(bytewise.Err) != errText(whole.Err) {
			t.Fatalf("read byte by byte: %d events, end %v; read whole: %d events, end %v",
				len(bytewise.Events), bytewise.Err, len(whole.Events), whole.Err)
		}
	})
}

// checkToolCalls returns what is wrong with the numbering of the events'
// tool calls and the place of their ids and names, or "".
func checkToolCalls(events []provider.Event) string {
	calls := 0
	for _, ev := range events {
		if ev.Kind != provider.EventToolCall {
			continue
		}
		switch d := ev.ToolCall; {
		case d.Index < 0 || d.Index > calls:
			return fmt.Sprintf("tool call index %d skips past %d calls", d.Index, calls)
		case d.Index == calls:
			calls++
		case d.ID != "" || d.Name != "":
			return fmt.Sprintf("tool call %d: id %q or name %q after its first fragment", d.Index, d.ID, d.Name)
		}
	}
	return ""
}

func decodeFrom(r io.Reader, extra string, dec httpx.Decoder) Result {
	s := httpx.NewStream(context.Background(), io.NopCloser(r), extra, dec)
	defer s.Close()
	return Drain(s, nil)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
