package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server"
)

// profileInProcess runs llmrelay in this process, from the same generated
// configuration and production wiring (server.New), and profiles the
// concurrency-8 relayed load (CPU, allocations) or the heap with -hold slow
// streams open. The profiles hold the client and upstream too; focus on
// llmrelay's code with, for example,
// `go tool pprof -focus 'service|httpx|openai|grpc.\(\*Server\)' FILE`.
func profileInProcess(ctx context.Context, o options, fast, slow *openaitest.Server, want string) error {
	fastURL, slowURL := fast.URL(), slow.URL()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ca := ""
	if pem := fast.CertificatePEM(); pem != nil {
		dir, err := os.MkdirTemp("", "relaybench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		ca = filepath.Join(dir, "upstream-ca.pem")
		if err := os.WriteFile(ca, pem, 0o600); err != nil {
			return err
		}
	}
	cfg, err := config.Parse([]byte(relayConfig(lis.Addr().String(), "off", "", fastURL, slowURL, "", ca, time.Minute)))
	if err != nil {
		return err
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer func() {
		srv.Shutdown(context.Background())
		<-served
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	r := relayed(llmrelayv1.NewLLMServiceClient(conn), "openai/fake", want)
	throughput(ctx, r, 8, time.Second) // warm up
	if o.trace != "" {
		return traceBoth(ctx, o, fastURL, ca, lis.Addr().String(), want)
	}
	if o.heapprofile != "" {
		return heapWithStreamsOpen(ctx, o, lis.Addr().String(), slow, want)
	}

	f, err := os.Create(o.cpuprofile)
	if err != nil {
		return err
	}
	defer f.Close()
	if o.memprofile != "" {
		runtime.MemProfileRate = 4096
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	l := throughput(ctx, r, 8, o.dur)
	pprof.StopCPUProfile()
	fmt.Printf("in-process, concurrency 8: %.0f streams/s over %v (%d failed); CPU profile in %s\n", l.perSecond(), l.elapsed.Round(time.Millisecond), l.errs, o.cpuprofile)
	if o.memprofile != "" {
		mf, err := os.Create(o.memprofile)
		if err != nil {
			return err
		}
		defer mf.Close()
		if err := pprof.Lookup("allocs").WriteTo(mf, 0); err != nil {
			return err
		}
		fmt.Printf("allocation profile in %s\n", o.memprofile)
	}
	return nil
}

// heapWithStreamsOpen holds o.hold slow streams open through the
// in-process llmrelay and writes the heap profile once the upstream serves
// them all.
func heapWithStreamsOpen(ctx context.Context, o options, addr string, slow *openaitest.Server, want string) error {
	var clients []llmrelayv1.LLMServiceClient
	for range o.holdConns {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer c.Close()
		clients = append(clients, llmrelayv1.NewLLMServiceClient(c))
	}
	runtime.MemProfileRate = 4096
	done := make(chan struct{})
	go func() {
		defer close(done)
		for slow.OpenStreams() < int64(o.hold) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		runtime.GC()
		f, err := os.Create(o.heapprofile)
		if err != nil {
			fmt.Println("heap profile:", err)
			return
		}
		defer f.Close()
		_ = pprof.Lookup("heap").WriteTo(f, 0)
		fmt.Printf("heap profile with %d streams open in %s\n", slow.OpenStreams(), o.heapprofile)
		// The goroutines' stacks at the same moment: what each open stream
		// holds while it waits for the upstream's next chunk.
		if g, err := os.Create(o.heapprofile + ".goroutines"); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(g, 1)
			_ = g.Close()
			fmt.Printf("goroutine stacks in %s.goroutines\n", o.heapprofile)
		}
	}()
	var wg sync.WaitGroup
	for i := range o.hold {
		s := relayed(clients[i%len(clients)], "slow/fake", want)
		wg.Go(func() { _ = s(ctx) })
	}
	<-done
	wg.Wait()
	return nil
}
