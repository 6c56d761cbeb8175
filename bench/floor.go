package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// The floor is the least a gateway of llmrelay's design can cost: a gRPC
// server (grpc-go, default options, no interceptors) whose Generate hands
// the request straight to llmrelay's own openai adapter (the same HTTP
// client, transport settings, SSE reader and decoder) and relays its
// events as GenerateEvents: the same 20 deltas and Final the client gets
// from llmrelay. No chain (auth, limits, validation, metrics, logging),
// no retry plan, no stall timers, no output limit, no call record. What
// llmrelay costs above the floor is what those features cost; what the
// floor costs above a direct call is the price of the design itself (a
// gRPC hop in front of an HTTP client in a second process).

// floorService is the floor's LLMService.
type floorService struct {
	llmrelayv1.UnimplementedLLMServiceServer
	providers map[string]provider.Provider // by the model's provider prefix
	// perChunk relays one delta per upstream chunk (the floor before
	// coalesced deltas, -floor-per-chunk); otherwise the text already read
	// joins the delta being sent.
	perChunk bool
}

// serveFloor runs the floor relay on a loopback port in front of the
// upstreams named by -child-fast and -child-slow, and prints
// "grpc=ADDR metrics=ADDR".
func serveFloor() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "bench floor:", err)
		os.Exit(1)
	}
	svc := &floorService{providers: map[string]provider.Provider{}, perChunk: *childPerChunk}
	if *childPerChunk {
		// The floor as it was: one delta per chunk, net/http's Transport.
		httpx.UseNetHTTPOnly()
	}
	for name, url := range map[string]string{"openai": *childFast, "slow": *childSlow} {
		p, err := openai.New(provider.Config{Name: name, Kind: "openai", BaseURL: url, Transport: provider.Transport{CAFile: *childCA}})
		if err != nil {
			fail(err)
		}
		svc.providers[name] = p
	}
	serveGRPC(svc, fail)
}

// serveHop runs the gRPC hop alone (-grpc-hop) on a loopback port and
// prints "grpc=ADDR metrics=ADDR".
func serveHop() {
	serveGRPC(&hopService{text: openaitest.Text(*childChunks)}, func(err error) {
		fmt.Fprintln(os.Stderr, "bench hop:", err)
		os.Exit(1)
	})
}

// serveGRPC serves svc on a loopback port (grpc-go, default options) until
// stdin ends, after printing "grpc=ADDR metrics=ADDR".
func serveGRPC(svc llmrelayv1.LLMServiceServer, fail func(error)) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	maddr, err := serveMetrics()
	if err != nil {
		fail(err)
	}
	s := grpc.NewServer()
	llmrelayv1.RegisterLLMServiceServer(s, svc)
	go func() { _ = s.Serve(l) }()
	fmt.Printf("grpc=%s metrics=%s\n", l.Addr(), maddr)
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Stop()
	os.Exit(0)
}

// Generate implements llmrelayv1.LLMServiceServer: one attempt, its
// text relayed as deltas, then the Final.
func (f *floorService) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	name, model, _ := strings.Cut(req.GetModel(), "/")
	p, ok := f.providers[name]
	if !ok {
		return status.Error(codes.InvalidArgument, "unknown provider")
	}
	preq := &provider.Request{Model: model, Attempt: 1}
	for _, m := range req.GetMessages() {
		preq.Messages = append(preq.Messages, provider.Message{Role: provider.Role(m.GetRole()), Content: m.GetContent()})
	}
	st, err := p.Stream(stream.Context(), preq)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	defer st.Close()
	buffered, _ := st.(provider.BufferedStream)
	if f.perChunk {
		buffered = nil
	}
	var text strings.Builder
	var seq uint64
	final := &llmrelayv1.Final{Attempts: 1, Provider: name, Model: model}
	// held is an event (or the stream's end) read ahead while joining text.
	var held *provider.Event
	var heldErr error
	for {
		var ev provider.Event
		switch {
		case heldErr != nil:
			err = heldErr
		case held != nil:
			ev, held = *held, nil
		default:
			ev, err = st.Recv()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return status.Error(codes.Unavailable, err.Error())
		}
		switch ev.Kind {
		case provider.EventText:
			if ev.Text == "" {
				continue
			}
			delta := ev.Text
			// Fewer, fuller messages, as llmrelay's
			// streaming.coalesce_deltas: the text the adapter has already
			// read joins this delta; nothing waits for more.
			for buffered != nil {
				next, ready, nerr := buffered.RecvBuffered()
				if !ready {
					break
				}
				if nerr != nil {
					heldErr = nerr
					break
				}
				if next.Kind != provider.EventText {
					held = &next
					break
				}
				delta += next.Text
			}
			text.WriteString(delta)
			seq++
			if err := stream.Send(&llmrelayv1.GenerateEvent{Sequence: seq, Attempt: 1,
				Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{Text: delta}}}); err != nil {
				return err
			}
		case provider.EventFinish:
			final.FinishReason = llmrelayv1.FinishReason(ev.FinishReason)
		case provider.EventUsage:
			final.Usage = &llmrelayv1.Usage{InputTokens: uint64(ev.Usage.InputTokens), OutputTokens: uint64(ev.Usage.OutputTokens)}
		}
	}
	final.Message = &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: text.String()}
	seq++
	return stream.Send(&llmrelayv1.GenerateEvent{Sequence: seq, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Final{Final: final}})
}

// hopService is the gRPC hop alone: a bare grpc-go server that answers
// every Generate with the reply's whole text in one delta and the Final,
// from memory, with no upstream. Nothing that relays an upstream's reply
// over gRPC costs less: what it adds to a direct call is the hop's own
// price (two more sockets, two more processes woken, gRPC's framing on
// both sides).
type hopService struct {
	llmrelayv1.UnimplementedLLMServiceServer
	text string
}

// Generate implements llmrelayv1.LLMServiceServer.
func (h *hopService) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	if err := stream.Send(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1,
		Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{Text: h.text}}}); err != nil {
		return err
	}
	_, model, _ := strings.Cut(req.GetModel(), "/")
	return stream.Send(&llmrelayv1.GenerateEvent{Sequence: 2, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{
		Attempts: 1, Provider: "hop", Model: model, FinishReason: llmrelayv1.FinishReason_FINISH_REASON_STOP,
		Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: h.text},
	}}})
}
