package server_test

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestSecurityMetadataIsBounded: a call's metadata is bounded at
// server.MaxHeaderListBytes, advertised in the server's SETTINGS, and a
// client that sends more anyway (here without a key) has its stream reset,
// or its connection closed when it sends far more (x/net's framer), before
// any link runs, while a call within the bound is answered.
func TestSecurityMetadataIsBounded(t *testing.T) {
	addr, _ := servertest.Listen(t, securedConfig())
	for _, c := range []struct {
		name string
		pad  int
		ok   bool
	}{
		{"within the bound", 1 << 10, true},
		{"a little over it", server.MaxHeaderListBytes + 4<<10, false},
		{"far over it", 4 * server.MaxHeaderListBytes, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := rawCall(t, addr, c.pad)
			if _, answered := f.(*http2.MetaHeadersFrame); answered != c.ok {
				t.Fatalf("a call with %d bytes of padding metadata: the server answered with %T, want its response headers: %v", c.pad, f, c.ok)
			}
		})
	}
}

// rawCall sends a Generate's headers, END_STREAM, with pad bytes of
// padding headers (of 1 KiB each: one string longer than the bound costs
// the client its connection), over a connection of its own from a client
// that ignores the server's SETTINGS, and returns the first frame the
// server answers the stream with: its response HEADERS, or an RST_STREAM;
// nil when it closed the connection instead. It checks that the server's
// SETTINGS advertise the bound.
func rawCall(t *testing.T, addr string, pad int) http2.Frame {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}

	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":authority", addr},
		{":path", llmrelayv1.LLMService_Generate_FullMethodName},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for i := 0; i < pad>>10; i++ {
		_ = enc.WriteField(hpack.HeaderField{Name: "x-pad-" + strconv.Itoa(i), Value: strings.Repeat("a", 1<<10)})
	}
	b := block.Bytes()
	const chunk = 16 << 10 // the default SETTINGS_MAX_FRAME_SIZE
	first := b[:min(chunk, len(b))]
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndStream: true, EndHeaders: len(b) <= chunk}); err != nil {
		return nil // the server closed the connection
	}
	for b = b[len(first):]; len(b) > 0; {
		n := min(chunk, len(b))
		if err := fr.WriteContinuation(1, n == len(b), b[:n]); err != nil {
			return nil // the server closed the connection
		}
		b = b[n:]
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return nil // the connection closed
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				v, ok := f.Value(http2.SettingMaxHeaderListSize)
				if !ok || v > server.MaxHeaderListBytes {
					t.Errorf("the server's SETTINGS_MAX_HEADER_LIST_SIZE = %d (set: %v), want at most %d", v, ok, server.MaxHeaderListBytes)
				}
				_ = fr.WriteSettingsAck()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == 1 {
				return f
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				return f
			}
		}
	}
}
