package service_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/engine/enginetest"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// partialRatio is the documented bound: an attempt's partial_object events
// total at most 4 × the reply text it received so far.
const partialRatio = 4

// partialStats is what a client sees of an attempt's partial objects.
type partialStats struct {
	count, bytes int
	// firstAfter is how many bytes of text had arrived when the first
	// partial object came; last is the last one's encoded size.
	firstAfter, last int
}

// checkPartialBound checks the events of a call, attempt by attempt: at
// every partial object, the partial objects of its attempt so far (each
// counted as its encoded event, as on the wire) are within partialRatio ×
// the text its deltas brought so far, and each one shows nothing the final
// object does not hold when the attempt is the one that succeeded. It
// returns each attempt's figures.
func checkPartialBound(t *testing.T, events []*llmrelayv1.GenerateEvent) map[uint32]*partialStats {
	t.Helper()
	f := final(t, events)
	won := events[len(events)-1].GetAttempt()
	text := map[uint32]int{}
	stats := map[uint32]*partialStats{}
	for _, ev := range events {
		a := ev.GetAttempt()
		if d := ev.GetDelta(); d != nil {
			text[a] += len(d.GetText())
		}
		p := ev.GetPartialObject()
		if p == nil {
			continue
		}
		st := stats[a]
		if st == nil {
			st = &partialStats{firstAfter: text[a]}
			stats[a] = st
		}
		size := proto.Size(ev)
		st.count++
		st.bytes += size
		st.last = size
		if st.bytes > partialRatio*text[a] {
			t.Fatalf("attempt %d: partial object %d brings the partial bytes to %d after %d bytes of text: over %d×", a, st.count, st.bytes, text[a], partialRatio)
		}
		if a == won && f.GetObject() != nil && !prefixOf(p.AsInterface(), f.GetObject().AsInterface()) {
			t.Fatalf("attempt %d: partial object %d is not a prefix of the final object", a, st.count)
		}
	}
	return stats
}

// TestPartialObjectsStayLinear streams 25 KB objects in 4-byte deltas
// from an OpenAI-compatible upstream and checks the documented bound on
// the partial objects' bytes, and that they still show the reply's
// progress: several of them, the first one early, the last one close to
// the final object. Sending the whole object on every change, as llmrelay
// did, sends 5,001 snapshots and 62.6 MB for the first reply.
func TestPartialObjectsStayLinear(t *testing.T) {
	long := strings.Repeat("Una frase lunga, scritta piano: ", 800)
	numbers := strings.TrimSuffix(strings.Repeat("1,", 12600), ",")
	tests := []struct {
		name, schema, reply string
		// minCount is the fewest partial objects the reply must get.
		minCount int
		// lastShare is the smallest share of the final object's size the
		// last partial object must show, in percent.
		lastShare int
	}{
		{"an array of objects", `{"type":"object","required":["items"]}`, enginetest.ItemsReply(240), 20, 70},
		{"one long string", `{"type":"object","properties":{"essay":{"type":"string"}}}`, `{"essay": "` + long + `"}`, 8, 45},
		// Each one-digit number, 2 bytes of text, takes 11 bytes in a
		// google.protobuf.Value: a snapshot is larger than 4 × its text,
		// so only the empty array's shows. The bound still holds.
		{"numbers that encode larger than their text", `{"type":"object"}`, `{"n": [` + numbers + `]}`, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.reply) < 25_000 {
				t.Fatalf("the reply is %d bytes, want 25 KB", len(tt.reply))
			}
			deltas := enginetest.SplitDeltas(tt.reply, 4)
			u := pt.NewUpstream(t, func(int, *http.Request) pt.Reply {
				return pt.Reply{Body: openAIStreamDeltas(t, deltas...)}
			})
			cfg := config.Default()
			cfg.Providers = []provider.Config{{Name: "openai", Kind: "openai", BaseURL: u.URL + "/v1"}}
			// The bound is per delta: one event per 4-byte chunk, as a
			// client that keeps up gets them (the upstream sends them all
			// at once, which coalescing would join).
			cfg.Streaming.CoalesceDeltas = false
			in := servertest.Start(t, cfg)
			req := structuredEcho(t, tt.schema, "", &llmrelayv1.ResponseFormat{StreamPartialObjects: true})
			req.Model = "openai/gpt-4o-mini"
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			f := final(t, events)
			if f.GetObject() == nil || f.GetMessage().GetContent() != tt.reply {
				t.Fatalf("the final object is missing or its text is not the reply")
			}
			st := checkPartialBound(t, events)[1]
			if st == nil {
				t.Fatal("no partial object")
			}
			finalSize := proto.Size(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1, Event: &llmrelayv1.GenerateEvent_PartialObject{PartialObject: f.GetObject()}})
			t.Logf("%d bytes of reply in %d deltas: %d partial objects, %d bytes (%.2f× the reply); the first after %d bytes; the last %d bytes, %d%% of the final object's",
				len(tt.reply), len(deltas), st.count, st.bytes, float64(st.bytes)/float64(len(tt.reply)), st.firstAfter, st.last, 100*st.last/finalSize)
			if st.count < tt.minCount {
				t.Errorf("%d partial objects, want at least %d", st.count, tt.minCount)
			}
			if st.firstAfter > 64 {
				t.Errorf("the first partial object came after %d bytes of text, want it within the first 64", st.firstAfter)
			}
			if 100*st.last < tt.lastShare*finalSize {
				t.Errorf("the last partial object is %d bytes, the final object %d: want at least %d%%", st.last, finalSize, tt.lastShare)
			}
		})
	}
}

// TestPartialObjectBoundPerAttempt: a failed attempt's partial objects are
// discarded with it, and the attempt after it starts with a budget of its
// own: its first partial object comes as early as the first attempt's.
func TestPartialObjectBoundPerAttempt(t *testing.T) {
	reply := enginetest.ItemsReply(100)
	deltas := enginetest.SplitDeltas(reply, 4)
	var first []provider.Event
	for _, d := range deltas[:len(deltas)/2] {
		first = append(first, provider.Event{Kind: provider.EventText, Text: d})
	}
	var second []provider.Event
	for _, d := range deltas {
		second = append(second, provider.Event{Kind: provider.EventText, Text: d})
	}
	newScripted(t,
		step{events: first, err: &provider.Error{Kind: provider.KindInStream, Class: provider.ClassOverloaded, Type: "overloaded_error"}},
		step{events: second, err: io.EOF})
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(&recordingTimer{}))
	req := structuredEcho(t, `{"type":"object"}`, "", &llmrelayv1.ResponseFormat{StreamPartialObjects: true})
	req.Model = "scripted/any"
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	for _, ev := range events {
		if w := ev.GetWillRetry(); w != nil && !w.GetDiscardPartial() {
			t.Errorf("the WillRetry after partial objects does not discard them: %v", w)
		}
	}
	stats := checkPartialBound(t, events)
	if len(stats) != 2 {
		t.Fatalf("partial objects from %d attempts, want 2", len(stats))
	}
	for a, st := range stats {
		if st.count < 10 || st.firstAfter > 16 {
			t.Errorf("attempt %d: %d partial objects, the first after %d bytes: want many, the first at once", a, st.count, st.firstAfter)
		}
	}
}

// TestPartialObjectInterval: with an interval longer than the call, each
// attempt sends one partial object, its first; the server's floor raises
// a request's shorter interval.
func TestPartialObjectInterval(t *testing.T) {
	// The longest interval allowed: far longer than the call takes.
	const long = time.Minute
	tests := []struct {
		name             string
		requested, floor time.Duration
		wantOne          bool
	}{
		{"none", 0, 0, false},
		{"the request's", long, 0, true},
		{"the server's floor", 0, long, true},
		{"the request's, raised to the server's floor", time.Millisecond, long, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deltas := enginetest.SplitDeltas(enginetest.ItemsReply(20), 4)
			var evs []provider.Event
			for _, d := range deltas {
				evs = append(evs, provider.Event{Kind: provider.EventText, Text: d})
			}
			newScripted(t, step{events: evs[:len(evs)/2], err: &provider.Error{Kind: provider.KindInStream, Class: provider.ClassOverloaded, Type: "overloaded_error"}},
				step{events: evs, err: io.EOF})
			cfg := scriptedConfig(t)
			cfg.StructuredOutput.PartialObjectMinInterval = tt.floor
			in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
			rf := &llmrelayv1.ResponseFormat{StreamPartialObjects: true}
			if tt.requested > 0 {
				rf.PartialObjectInterval = durationpb.New(tt.requested)
			}
			req := structuredEcho(t, `{"type":"object"}`, "", rf)
			req.Model = "scripted/any"
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			stats := checkPartialBound(t, events)
			var counts []string
			for a := uint32(1); a <= 2; a++ {
				st := stats[a]
				if st == nil {
					t.Fatalf("attempt %d sent no partial object", a)
				}
				counts = append(counts, fmt.Sprint(st.count))
				if st.firstAfter > 16 {
					t.Errorf("attempt %d: the first partial object came after %d bytes of text", a, st.firstAfter)
				}
				if one := st.count == 1; one != tt.wantOne {
					t.Errorf("attempt %d sent %d partial objects; want one only: %v", a, st.count, tt.wantOne)
				}
			}
			t.Logf("partial objects per attempt: %s", strings.Join(counts, ", "))
		})
	}
}

// TestPartialObjectIntervalValidated: the interval is at most a minute and
// not negative.
func TestPartialObjectIntervalValidated(t *testing.T) {
	in := servertest.Start(t, nil)
	for _, d := range []*durationpb.Duration{{Seconds: 61}, {Seconds: -1}} {
		req := structuredEcho(t, sentiment, "", &llmrelayv1.ResponseFormat{StreamPartialObjects: true, PartialObjectInterval: d})
		_, err := servertest.Collect(t.Context(), in.Client, req)
		st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST", nil)
		if !strings.Contains(st.Message(), "response_format.partial_object_interval") {
			t.Errorf("interval %v: message %q, want it to name response_format.partial_object_interval", d.AsDuration(), st.Message())
		}
	}
}
