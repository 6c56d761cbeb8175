package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime/trace"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
)

// traceBoth serves the floor in this process beside the in-process
// llmrelay at relayAddr, and writes an execution trace of o.n streams made
// one at a time through each (o.trace + ".floor", o.trace + ".llmrelay"):
// the same client, upstream and process, so what differs between the two
// traces is the relay's. `go tool trace FILE` shows them; the goroutine
// that runs a call's handler is woken (llmrelay: a stream worker) or
// created (the floor) by grpc.(*Server).serveStreams.
func traceBoth(ctx context.Context, o options, fastURL, ca, relayAddr, want string) error {
	addr, stop, err := floorInProcess(fastURL, ca)
	if err != nil {
		return err
	}
	defer stop()
	for _, k := range []struct{ name, addr string }{{"floor", addr}, {"llmrelay", relayAddr}} {
		conn, err := grpc.NewClient(k.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := traceStreams(ctx, o.trace+"."+k.name, relayed(llmrelayv1.NewLLMServiceClient(conn), "openai/fake", want), o.n); err != nil {
			return err
		}
	}
	return nil
}

// traceStreams warms s up, then writes an execution trace of n streams
// made one at a time through it to path.
func traceStreams(ctx context.Context, path string, s streamer, n int) error {
	for range min(n, 200) {
		s(ctx)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := trace.Start(f); err != nil {
		return err
	}
	var total time.Duration
	for range n {
		r := s(ctx)
		if r.err != nil {
			trace.Stop()
			return r.err
		}
		total += r.total
	}
	trace.Stop()
	fmt.Printf("execution trace of %d streams at concurrency 1 (mean %v each) in %s\n", n, (total / time.Duration(n)).Round(time.Microsecond), path)
	return nil
}

// floorInProcess serves the floor (floorService, coalescing) in this
// process in front of the upstream at fastURL (whose CA certificate is in
// the file ca, "" for plain HTTP); it returns its address and a func that
// stops it.
func floorInProcess(fastURL, ca string) (string, func(), error) {
	p, err := openai.New(provider.Config{Name: "openai", Kind: "openai", BaseURL: fastURL, Transport: provider.Transport{CAFile: ca}})
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	s := grpc.NewServer()
	llmrelayv1.RegisterLLMServiceServer(s, &floorService{providers: map[string]provider.Provider{"openai": p}})
	go func() { _ = s.Serve(l) }()
	return l.Addr().String(), s.Stop, nil
}
