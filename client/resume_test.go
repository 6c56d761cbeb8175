package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// scriptedStub answers each Generate or Resume with the next scripted
// stream, and records the calls.
type scriptedStub struct {
	llmrelayv1.LLMServiceClient
	streams []*scripted
	calls   []string // "generate <request id>" or "resume <id> <after>"
}

func (s *scriptedStub) next() *scripted {
	if len(s.streams) == 0 {
		return &scripted{end: status.Error(codes.Internal, "no more scripted streams")}
	}
	st := s.streams[0]
	s.streams = s.streams[1:]
	return st
}

func (s *scriptedStub) Generate(_ context.Context, req *llmrelayv1.GenerateRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[llmrelayv1.GenerateEvent], error) {
	s.calls = append(s.calls, "generate "+req.GetRequestId())
	return s.next(), nil
}

func (s *scriptedStub) Resume(_ context.Context, req *llmrelayv1.ResumeRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[llmrelayv1.GenerateEvent], error) {
	s.calls = append(s.calls, fmt.Sprintf("resume %s %d", req.GetRequestId(), req.GetAfterSequence()))
	return s.next(), nil
}

// scripted is a stream that sends its events, then ends with end, with
// response headers.
type scripted struct {
	grpc.ClientStream
	header  metadata.MD
	trailer metadata.MD
	events  []*llmrelayv1.GenerateEvent
	end     error
}

func (s *scripted) Recv() (*llmrelayv1.GenerateEvent, error) {
	if len(s.events) == 0 {
		return nil, s.end
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *scripted) Header() (metadata.MD, error) { return s.header, nil }

func (s *scripted) Trailer() metadata.MD { return s.trailer }

func ev(seq uint64, text string) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Sequence: seq, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{Text: text}}}
}

func fin(seq uint64) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Sequence: seq, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{}}}
}

// llmrelayErr is a status with llmrelay's ErrorInfo.
func llmrelayErr(code codes.Code, reason string) error {
	st, _ := status.New(code, reason).WithDetails(&errdetails.ErrorInfo{Domain: Domain, Reason: reason})
	return st.Err()
}

var (
	resumableHeader = metadata.Pairs(HeaderResumable, "true", HeaderRequestID, "id-1")
	dropped         = status.Error(codes.Unavailable, "error reading from server: EOF")
)

func TestStreamResumes(t *testing.T) {
	tests := []struct {
		name      string
		req       *llmrelayv1.GenerateRequest
		streams   []*scripted
		wantCalls []string
		wantSeqs  []uint64
		wantErr   func(error) bool
	}{
		{
			name: "dropped after two events: resumed after 2",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), ev(2, "b")}, end: dropped},
				{events: []*llmrelayv1.GenerateEvent{ev(3, "c"), fin(4)}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "resume id-1 2"},
			wantSeqs:  []uint64{1, 2, 3, 4},
		},
		{
			name: "a route made it resumable: the id comes from the headers",
			req:  &llmrelayv1.GenerateRequest{},
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: status.Error(codes.Internal, "stream terminated by RST_STREAM")},
				{events: []*llmrelayv1.GenerateEvent{fin(2)}, end: io.EOF},
			},
			wantCalls: []string{"generate ", "resume id-1 1"},
			wantSeqs:  []uint64{1, 2},
		},
		{
			name: "a route made it resumable, dropped after its headers, before any event: resumed from the start by their id",
			req:  &llmrelayv1.GenerateRequest{},
			streams: []*scripted{
				{header: resumableHeader, end: dropped},
				{events: []*llmrelayv1.GenerateEvent{ev(1, "a"), fin(2)}, end: io.EOF},
			},
			wantCalls: []string{"generate ", "resume id-1 0"},
			wantSeqs:  []uint64{1, 2},
		},
		{
			name: "dropped before any event: the same Generate again",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{end: dropped},
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), fin(2)}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "generate id-1"},
			wantSeqs:  []uint64{1, 2},
		},
		{
			name: "a repeated event is skipped",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), ev(2, "b")}, end: dropped},
				{events: []*llmrelayv1.GenerateEvent{ev(2, "b"), ev(3, "c"), fin(4)}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "resume id-1 2"},
			wantSeqs:  []uint64{1, 2, 3, 4},
		},
		{
			name: "a gap is an error, never skipped over",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: dropped},
				{events: []*llmrelayv1.GenerateEvent{ev(3, "c")}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "resume id-1 1"},
			wantSeqs:  []uint64{1},
			wantErr:   func(err error) bool { return errors.Is(err, ErrEventsMissing) },
		},
		{
			name: "the call's own failure ends the stream",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: llmrelayErr(codes.Unavailable, "RETRIES_EXHAUSTED")},
			},
			wantCalls: []string{"generate id-1"},
			wantSeqs:  []uint64{1},
			wantErr:   func(err error) bool { return FromError(err).Reason == "RETRIES_EXHAUSTED" },
		},
		{
			name: "a Resume cut by its server's shutdown is resumed again",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: dropped},
				{events: []*llmrelayv1.GenerateEvent{ev(2, "b")}, end: llmrelayErr(codes.Unavailable, ReasonResumeInterrupted)},
				{events: []*llmrelayv1.GenerateEvent{fin(3)}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "resume id-1 1", "resume id-1 2"},
			wantSeqs:  []uint64{1, 2, 3},
		},
		{
			name: "NOT_FOUND ends the stream",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: dropped},
				{end: llmrelayErr(codes.NotFound, "RESUMABLE_CALL_NOT_FOUND")},
			},
			wantCalls: []string{"generate id-1", "resume id-1 1"},
			wantSeqs:  []uint64{1},
			wantErr:   func(err error) bool { return FromError(err).Code == codes.NotFound },
		},
		{
			name: "a call that is not resumable is not resumed",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1"},
			streams: []*scripted{
				{events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: dropped},
			},
			wantCalls: []string{"generate id-1"},
			wantSeqs:  []uint64{1},
			wantErr:   func(err error) bool { return FromError(err).Code == codes.Unavailable },
		},
		{
			name: "a server that could not make it resumable says so in its headers",
			req:  &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)},
			streams: []*scripted{
				{header: metadata.MD{}, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: dropped},
			},
			wantCalls: []string{"generate id-1"},
			wantSeqs:  []uint64{1},
			wantErr:   func(err error) bool { return FromError(err).Code == codes.Unavailable },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := &scriptedStub{streams: tt.streams}
			c := &Client{stub: stub}
			s, err := c.Generate(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []uint64
			var gotErr error
			for e, err := range s.Events() {
				if err != nil {
					gotErr = err
					break
				}
				seqs = append(seqs, e.GetSequence())
			}
			if fmt.Sprint(stub.calls) != fmt.Sprint(tt.wantCalls) {
				t.Errorf("calls %q, want %q", stub.calls, tt.wantCalls)
			}
			if fmt.Sprint(seqs) != fmt.Sprint(tt.wantSeqs) {
				t.Errorf("events %v, want %v", seqs, tt.wantSeqs)
			}
			if (tt.wantErr == nil) != (gotErr == nil) || (tt.wantErr != nil && !tt.wantErr(gotErr)) {
				t.Errorf("error %v", gotErr)
			}
		})
	}
}

// TestGenerateNilRequest: a nil request is sent as an empty Generate,
// which the server refuses naming the fields it lacks; it was sent as a
// Resume without an id.
func TestGenerateNilRequest(t *testing.T) {
	stub := &scriptedStub{streams: []*scripted{{end: status.Error(codes.InvalidArgument, "model: value is required")}}}
	s, err := (&Client{stub: stub}).Generate(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(s, nil); FromError(err).Code != codes.InvalidArgument || fmt.Sprint(stub.calls) != "[generate ]" {
		t.Fatalf("%v after calls %q, want INVALID_ARGUMENT after one Generate", err, stub.calls)
	}
}

// TestLastSequenceIsWhereResumePicksUp: LastSequence is the last event the
// stream returned, across a resume, and a stream of Client.Resume starts
// from its afterSequence; a caller that gives a stream up (Ctrl-C in
// llmrelay generate) resumes the call after it.
func TestLastSequenceIsWhereResumePicksUp(t *testing.T) {
	stub := &scriptedStub{streams: []*scripted{
		{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), ev(2, "b")}, end: dropped},
		{events: []*llmrelayv1.GenerateEvent{ev(3, "c")}, end: dropped},
	}}
	c := &Client{stub: stub}
	s, err := c.Generate(t.Context(), &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.LastSequence(); got != 0 {
		t.Errorf("before any event: %d, want 0", got)
	}
	for want := uint64(1); want <= 3; want++ {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		if got := s.LastSequence(); got != want {
			t.Errorf("after event %d: %d", want, got)
		}
	}
	s.Close()
	r, err := c.Resume(t.Context(), s.RequestID(), s.LastSequence())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.LastSequence(); got != 3 {
		t.Errorf("a Resume after 3: %d before its first event, want 3", got)
	}
	if want := "[generate id-1 resume id-1 2 resume id-1 3]"; fmt.Sprint(stub.calls) != want {
		t.Errorf("calls %v, want %s", stub.calls, want)
	}
}

// TestStreamResumeGivesUp: a call that cannot be picked up again (the
// network stays down) ends after maxResumeTries reconnections in a row.
func TestStreamResumeGivesUp(t *testing.T) {
	defer func(b func(int) time.Duration) { resumeBackoff = b }(resumeBackoff)
	var waits []time.Duration
	real := resumeBackoff
	resumeBackoff = func(try int) time.Duration { waits = append(waits, real(try)); return time.Millisecond }
	streams := []*scripted{{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: dropped}}
	for range maxResumeTries + 2 {
		streams = append(streams, &scripted{end: dropped})
	}
	stub := &scriptedStub{streams: streams}
	s, err := (&Client{stub: stub}).Generate(t.Context(), &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Collect(s, nil)
	if FromError(err).Code != codes.Unavailable || len(stub.calls) != 1+maxResumeTries {
		t.Fatalf("%v after %d calls, want UNAVAILABLE after %d", err, len(stub.calls), 1+maxResumeTries)
	}
	if want := "[100ms 200ms 400ms 800ms 1.6s 2s 2s]"; fmt.Sprint(waits) != want {
		t.Fatalf("waits %v, want %s", waits, want)
	}
}

// TestStreamReissues: a resumable call the server lost (RESUMABLE_CALL_LOST,
// or NOT_FOUND in answer to the stream's own Resume) is sent again, with
// the same request_id, only when the caller allowed it, after the caller
// was told to discard what it was shown; its events then start over.
func TestStreamReissues(t *testing.T) {
	lost := llmrelayErr(codes.Aborted, ReasonResumableCallLost)
	req := func() *llmrelayv1.GenerateRequest {
		return &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)}
	}
	tests := []struct {
		name      string
		allow     bool
		streams   []*scripted
		wantCalls []string
		wantSeqs  []uint64
		discards  int
		wantErr   string // the reason the stream ends with, "" for its final
	}{
		{
			name:      "lost, not allowed: the stream ends with the reason",
			streams:   []*scripted{{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: lost}},
			wantCalls: []string{"generate id-1"},
			wantSeqs:  []uint64{1},
			wantErr:   ReasonResumableCallLost,
		},
		{
			name:  "lost on the live stream: the same request again",
			allow: true,
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), ev(2, "b")}, end: lost},
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), ev(2, "b"), fin(3)}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "generate id-1"},
			wantSeqs:  []uint64{1, 2, 1, 2, 3},
			discards:  1,
		},
		{
			name:  "dropped, then lost in answer to the Resume",
			allow: true,
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), ev(2, "b")}, end: dropped},
				{end: lost},
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a"), fin(2)}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "resume id-1 2", "generate id-1"},
			wantSeqs:  []uint64{1, 2, 1, 2},
			discards:  1,
		},
		{
			name:  "dropped, then NOT_FOUND in answer to the Resume",
			allow: true,
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: dropped},
				{end: llmrelayErr(codes.NotFound, ReasonResumableCallNotFound)},
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{fin(1)}, end: io.EOF},
			},
			wantCalls: []string{"generate id-1", "resume id-1 1", "generate id-1"},
			wantSeqs:  []uint64{1, 1},
			discards:  1,
		},
		{
			name:  "the call's own failure is not sent again",
			allow: true,
			streams: []*scripted{
				{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "a")}, end: llmrelayErr(codes.Unavailable, "RETRIES_EXHAUSTED")},
			},
			wantCalls: []string{"generate id-1"},
			wantSeqs:  []uint64{1},
			wantErr:   "RETRIES_EXHAUSTED",
		},
		{
			name:  "at most 3 times",
			allow: true,
			streams: []*scripted{
				{header: resumableHeader, end: lost},
				{header: resumableHeader, end: lost},
				{header: resumableHeader, end: lost},
				{header: resumableHeader, end: lost},
			},
			wantCalls: []string{"generate id-1", "generate id-1", "generate id-1", "generate id-1"},
			discards:  3,
			wantErr:   ReasonResumableCallLost,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := &scriptedStub{streams: tt.streams}
			s, err := (&Client{stub: stub}).Generate(t.Context(), req())
			if err != nil {
				t.Fatal(err)
			}
			discards := 0
			if tt.allow {
				s.AllowReissue(func(cause error) {
					if r := FromError(cause).Reason; r != ReasonResumableCallLost && r != ReasonResumableCallNotFound {
						t.Errorf("discard told of %v", cause)
					}
					discards++
				})
			}
			var seqs []uint64
			var gotErr error
			for e, err := range s.Events() {
				if err != nil {
					gotErr = err
					break
				}
				seqs = append(seqs, e.GetSequence())
			}
			if fmt.Sprint(stub.calls) != fmt.Sprint(tt.wantCalls) {
				t.Errorf("calls %q, want %q", stub.calls, tt.wantCalls)
			}
			if fmt.Sprint(seqs) != fmt.Sprint(tt.wantSeqs) {
				t.Errorf("events %v, want %v", seqs, tt.wantSeqs)
			}
			if discards != tt.discards || s.Reissues() != tt.discards {
				t.Errorf("%d discards, %d reissues; want %d", discards, s.Reissues(), tt.discards)
			}
			got := ""
			if gotErr != nil {
				got = FromError(gotErr).Reason
			}
			if (gotErr == nil) != (tt.wantErr == "") || got != tt.wantErr {
				t.Errorf("error %v, want reason %q", gotErr, tt.wantErr)
			}
		})
	}
}

// TestCollectReissues: Collect with Hooks.OnReissue takes back what the
// lost call showed and returns the new call's final.
func TestCollectReissues(t *testing.T) {
	stub := &scriptedStub{streams: []*scripted{
		{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "Hel"), ev(2, "lo")}, end: llmrelayErr(codes.Aborted, ReasonResumableCallLost)},
		{header: resumableHeader, events: []*llmrelayv1.GenerateEvent{ev(1, "Hi"), {Sequence: 2, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{Message: &llmrelayv1.Message{Content: "Hi"}}}}}, end: io.EOF},
	}}
	s, err := (&Client{stub: stub}).Generate(t.Context(), &llmrelayv1.GenerateRequest{RequestId: "id-1", Resumable: proto.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var screen string
	final, err := Collect(s, &Hooks{
		OnDelta: func(d *llmrelayv1.Delta) { screen += d.GetText() },
		OnReissue: func(cause error, discarded string) {
			if discarded != "Hello" || FromError(cause).Reason != ReasonResumableCallLost {
				t.Errorf("OnReissue(%v, %q), want the lost call's reason and \"Hello\"", cause, discarded)
			}
			screen = screen[:len(screen)-len(discarded)]
		},
	})
	if err != nil || final.GetMessage().GetContent() != "Hi" || screen != "Hi" {
		t.Fatalf("Collect: %v, final %q, screen %q; want \"Hi\" shown once", err, final.GetMessage().GetContent(), screen)
	}
}

// talkingServer is an in-process llmrelay whose Generate makes the call
// resumable, sends two deltas and then holds the stream open until the
// client goes away; its Resume serves nothing.
type talkingServer struct {
	llmrelayv1.UnimplementedLLMServiceServer
}

func (talkingServer) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	if err := stream.SendHeader(metadata.Pairs(HeaderResumable, "true", HeaderRequestID, req.GetRequestId())); err != nil {
		return err
	}
	for _, e := range []*llmrelayv1.GenerateEvent{ev(1, "a"), ev(2, "b")} {
		if err := stream.Send(e); err != nil {
			return err
		}
	}
	<-stream.Context().Done()
	return stream.Context().Err()
}

// TestCloseEndsAResumableCall: a Client closed while a resumable call
// streams ends the call with CANCELLED; it is not resumed on a
// connection that is gone.
func TestCloseEndsAResumableCall(t *testing.T) {
	defer func(b func(int) time.Duration) { resumeBackoff = b }(resumeBackoff)
	resumeBackoff = func(int) time.Duration { return time.Millisecond }
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	llmrelayv1.RegisterLLMServiceServer(srv, talkingServer{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	c, err := New(lis.Addr().String(), WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := c.Generate(ctx, &llmrelayv1.GenerateRequest{Resumable: proto.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var resumes []string
	_, err = Collect(s, &Hooks{
		OnDelta: func(d *llmrelayv1.Delta) {
			if d.GetText() == "b" {
				_ = c.Close()
			}
		},
		OnResume: func(after uint64, cause error) { resumes = append(resumes, fmt.Sprint(after, " ", cause)) },
	})
	if FromError(err).Code != codes.Canceled || len(resumes) != 0 {
		t.Fatalf("after Close: %v, resumed %q; want CANCELLED, never resumed", err, resumes)
	}
}

// answeringServer is an in-process llmrelay whose Generate answers at once
// and names the call's request id in its trailer only, as llmrelay does
// for a call that is not resumable.
type answeringServer struct {
	llmrelayv1.UnimplementedLLMServiceServer
}

func (answeringServer) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	id := req.GetRequestId()
	if id == "" {
		id = "made-up-by-the-server"
	}
	stream.SetTrailer(metadata.Pairs(HeaderRequestID, id))
	for _, e := range []*llmrelayv1.GenerateEvent{ev(1, "a"), fin(2)} {
		if err := stream.Send(e); err != nil {
			return err
		}
	}
	return nil
}

// TestRequestIDOfACompletedCall: a call that names no request id learns
// the server's from the trailer once it completes, whether Collect or
// Events read it, so that a caller can report the call it got.
func TestRequestIDOfACompletedCall(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	llmrelayv1.RegisterLLMServiceServer(srv, answeringServer{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	c, err := New(lis.Addr().String(), WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tests := []struct {
		name string
		req  *llmrelayv1.GenerateRequest
		read func(*Stream) error
		want string
	}{
		{name: "Collect, no id", req: &llmrelayv1.GenerateRequest{}, read: func(s *Stream) error { _, err := Collect(s, nil); return err }, want: "made-up-by-the-server"},
		{name: "Events, no id", req: &llmrelayv1.GenerateRequest{}, read: func(s *Stream) error {
			for _, err := range s.Events() {
				if err != nil {
					return err
				}
			}
			return nil
		}, want: "made-up-by-the-server"},
		{name: "the request's own", req: &llmrelayv1.GenerateRequest{RequestId: "the-callers"}, read: func(s *Stream) error { _, err := Collect(s, nil); return err }, want: "the-callers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := c.Generate(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.read(s); err != nil {
				t.Fatal(err)
			}
			if got := s.RequestID(); got != tt.want {
				t.Errorf("RequestID() = %q after the final, want %q", got, tt.want)
			}
		})
	}
}
