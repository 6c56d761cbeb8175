package httpx

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// endDecoder relays each event's data as text and ends at "END".
type endDecoder struct{}

func (endDecoder) Decode(ev Event, out *[]provider.Event) (bool, error) {
	if string(ev.Data) == "END" {
		return true, nil
	}
	*out = append(*out, provider.Event{Kind: provider.EventText, Text: string(ev.Data)})
	return false, nil
}

func (endDecoder) EndsAtEOF() bool { return false }

// TestDrainAfterTheTerminatorIsCutShort: over httpx's own connections
// (HTTP/1.1 in the clear, HTTP/2 over TLS) a stream's request has no
// context of its own, and yet a reply that goes on after its terminator
// does not hold the stream's end: the drain's time limit ends the
// request (the connection closed, the stream reset), and the upstream
// sees its client go.
func TestDrainAfterTheTerminatorIsCutShort(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"HTTP/1.1", false}, {"HTTP/2", true}} {
		t.Run(tc.name, func(t *testing.T) {
			gone := make(chan struct{}, 1)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: one\n\ndata: END\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				gone <- struct{}{}
			}))
			defer srv.Close()
			var client *http.Client
			if tc.tls {
				srv.EnableHTTP2 = true
				srv.StartTLS()
				tr := &http.Transport{
					TLSClientConfig:   srv.Client().Transport.(*http.Transport).TLSClientConfig,
					ForceAttemptHTTP2: true,
					HTTP2:             &http.HTTP2Config{},
				}
				cp := newConnPool(tr, &h1Transport{next: tr, hosts: map[string]*h1Host{}}, 0)
				defer cp.CloseIdleConnections()
				client = &http.Client{Transport: cp}
			} else {
				srv.Start()
				c, err := NewClient(provider.Transport{}, "")
				if err != nil {
					t.Fatal(err)
				}
				defer pool.remove(c.Transport.(idleCloser))
				client = c
			}

			ctx := t.Context()
			s, err := open(ctx, client, request{url: srv.URL, header: http.Header{}, body: []byte("{}")}, endDecoder{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.attempt != ctx {
				t.Error("the stream's request has a context of its own")
			}
			if ev, err := s.Recv(); err != nil || ev.Text != "one" {
				t.Fatalf("first event: %+v, %v", ev, err)
			}
			// The terminator's io.EOF, then Close: the stream drains what
			// follows the terminator (in the first, or else in Close).
			ended := make(chan error, 1)
			go func() {
				_, err := s.Recv()
				_ = s.Close()
				ended <- err
			}()
			select {
			case err := <-ended:
				if err != io.EOF {
					t.Errorf("after the terminator: %v, want io.EOF", err)
				}
			case <-time.After(time.Minute): // wide: only a drain nothing cuts short waits this long
				srv.CloseClientConnections() // so that the test ends
				t.Fatal("the stream waits for a reply that goes on after its terminator")
			}
			select {
			case <-gone:
			case <-time.After(time.Minute):
				t.Fatal("the upstream's request did not end")
			}
		})
	}
}
