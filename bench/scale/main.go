// Command scale measures what the redis state store adds to a call, against
// the memory store: the store's own operations in-process, and whole calls
// through two llmrelay processes (the built binary, on loopback) that differ
// only in state.store, measured alternately in one run. It starts its own
// redis-server (Debian's package; scripts/redis-server.sh installs it),
// prints a table and a one-line summary, and asserts nothing.
//
//	go run ./bench/scale [-llmrelay bin/llmrelay] [-n 2000]
//
// `make bench-scale` builds the server and runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

const apiKey = "bench-key"

func main() {
	bin := flag.String("llmrelay", "bin/llmrelay", "the llmrelay binary to run (built with `make build`)")
	n := flag.Int("n", 2000, "measurements of each kind")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *n); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin string, n int) error {
	redisBin := redistest.Binary()
	if redisBin == "" {
		return errors.New("redis-server not found: run scripts/redis-server.sh (Debian's redis-server package)")
	}
	dir, err := os.MkdirTemp("", "bench-scale")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rs, err := redistest.Run(redisBin, dir)
	if err != nil {
		return err
	}
	defer rs.Stop()
	printMachine(redisBin)

	fmt.Printf("\nstate store operations, in-process, %d each (one API key: rate and stream lease)\n", n)
	fmt.Printf("  %-42s %9s %9s %9s\n", "", "p50", "p90", "p99")
	memAdmit, redisAdmit, redisRelease, err := storeOps(ctx, rs.Addr, n)
	if err != nil {
		return err
	}
	row("memory Admit", memAdmit)
	row("redis Admit (one round trip)", redisAdmit)
	row("redis Lease.Release", redisRelease)
	shared, err := sharedOps(ctx, rs.Addr, n)
	if err != nil {
		return err
	}
	for _, r := range shared {
		row(r.name, r.d)
	}
	memBegin, redisBegin := beginMeans(ctx, rs.Addr)
	fmt.Printf("  budget Begin + end, mean of %d: memory %.0f ns, redis %.0f ns (no round trip)\n", beginLoops, memBegin, redisBegin)
	const callers = 64
	decisions, scripts, err := concurrentRetries(ctx, rs.Addr, callers, 2*time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("  redis budget Retry, %d callers at once for 2s: %d decisions in %d scripts (%.1f per round trip; scripts include the publisher's)\n",
		callers, decisions, scripts, float64(decisions)/float64(max(scripts, 1)))

	mem, err := startRelay(ctx, bin, dir, "memory", "")
	if err != nil {
		return err
	}
	defer mem.kill()
	red, err := startRelay(ctx, bin, dir, "redis", rs.Addr)
	if err != nil {
		return err
	}
	defer red.kill()

	fmt.Printf("\nllmrelay calls, concurrency 1, alternating between the two servers, %d each\n", n)
	fmt.Printf("  %-42s %9s %9s %9s\n", "", "p50", "p90", "p99")
	calls := []struct {
		name string
		call func(context.Context, llmrelayv1.LLMServiceClient) error
	}{
		{"Generate (rate + stream lease)", generate},
		{"Generate via a route (+ health)", generateRoute},
		{"ListModels (rate)", listModels},
	}
	var summary []string
	for _, c := range calls {
		for range min(n/4, 200) { // warm-up
			_ = c.call(ctx, mem.client)
			_ = c.call(ctx, red.client)
		}
		var m, r []time.Duration
		for range n {
			for _, s := range []struct {
				client llmrelayv1.LLMServiceClient
				into   *[]time.Duration
			}{{mem.client, &m}, {red.client, &r}} {
				start := time.Now()
				if err := c.call(ctx, s.client); err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
				*s.into = append(*s.into, time.Since(start))
			}
		}
		row(c.name+", memory", m)
		row(c.name+", redis", r)
		added := pct(r, 50) - pct(m, 50)
		name := strings.Fields(c.name)[0]
		if strings.Contains(c.name, "route") {
			name += " via a route"
		}
		summary = append(summary, fmt.Sprintf("%s %+.3f ms", name, ms(added)))
	}
	fmt.Printf("\nadded by the redis store per call, p50: %s (target: under 0.3 ms)\n", strings.Join(summary, ", "))
	return nil
}

// storeOps times the stores' operations directly.
func storeOps(ctx context.Context, addr string, n int) (memAdmit, redisAdmit, redisRelease []time.Duration, err error) {
	cfg := state.DefaultConfig().Redis
	cfg.Address, cfg.KeyPrefix = addr, "bench-ops:"
	rs, err := redisstore.New(cfg, redisstore.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	defer rs.Close()
	ms := memory.New()
	q := state.Quota{Rate: 1e6, Burst: 1e6, MaxConcurrent: 1000}
	for i := range n + n/4 {
		warm := i < n/4
		start := time.Now()
		adm, err := ms.Admit(ctx, "k", q)
		d := time.Since(start)
		if err != nil || !adm.Allowed {
			return nil, nil, nil, fmt.Errorf("memory Admit: %+v, %v", adm, err)
		}
		adm.Lease.Release()
		if !warm {
			memAdmit = append(memAdmit, d)
		}
		start = time.Now()
		adm, err = rs.Admit(ctx, "k", q)
		d = time.Since(start)
		if err != nil || !adm.Allowed {
			return nil, nil, nil, fmt.Errorf("redis Admit: %+v, %v", adm, err)
		}
		start = time.Now()
		adm.Lease.Release()
		if !warm {
			redisAdmit = append(redisAdmit, d)
			redisRelease = append(redisRelease, time.Since(start))
		}
	}
	return memAdmit, redisAdmit, redisRelease, nil
}

func withKey(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+apiKey)
}

func generate(ctx context.Context, c llmrelayv1.LLMServiceClient) error {
	return drain(c.Generate(withKey(ctx), &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "one two three four"}},
	}))
}

// drain reads a Generate stream to its end.
func drain(gs grpc.ServerStreamingClient[llmrelayv1.GenerateEvent], err error) error {
	if err != nil {
		return err
	}
	for {
		if _, err := gs.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// generateRoute calls the route "echo", whose one target is mock/echo: the
// route's target health is read and the success recorded.
func generateRoute(ctx context.Context, c llmrelayv1.LLMServiceClient) error {
	return drain(c.Generate(withKey(ctx), &llmrelayv1.GenerateRequest{
		Model:    "echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "one two three four"}},
	}))
}

func listModels(ctx context.Context, c llmrelayv1.LLMServiceClient) error {
	_, err := c.ListModels(withKey(ctx), &llmrelayv1.ListModelsRequest{})
	return err
}

// relay is an llmrelay process.
type relay struct {
	cmd    *exec.Cmd
	conn   *grpc.ClientConn
	client llmrelayv1.LLMServiceClient
}

func (r *relay) kill() {
	r.conn.Close()
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// startRelay starts bin with the given store and waits until it serves.
func startRelay(ctx context.Context, bin, dir, store, redisAddr string) (*relay, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf(`listen: %s
metrics_listen: ""
log: {level: warn}
auth:
  keys:
    - {name: bench, sha256: %s, scopes: [generate, models.list], models: ["*"], requests_per_second: 1000000, burst: 1000000, max_concurrent_streams: 1000}
routes:
  - {name: echo, targets: [{model: mock/echo}]}
state:
  store: %s
`, addr, auth.HashKey(apiKey), store)
	if redisAddr != "" {
		cfg += fmt.Sprintf("  redis: {address: %s, key_prefix: \"bench:\"}\n", redisAddr)
	}
	path := filepath.Join(dir, store+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w (run make build first)", bin, err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	r := &relay{cmd: cmd, conn: conn, client: llmrelayv1.NewLLMServiceClient(conn)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return r, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.kill()
			return nil, fmt.Errorf("llmrelay (%s store) not serving: %v", store, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func row(name string, d []time.Duration) {
	fmt.Printf("  %-42s %7.3fms %7.3fms %7.3fms\n", name, ms(pct(d, 50)), ms(pct(d, 90)), ms(pct(d, 99)))
}

func printMachine(redisBin string) {
	fmt.Println("machine:")
	if out, err := exec.Command("nproc").Output(); err == nil {
		fmt.Printf("  %s CPUs\n", strings.TrimSpace(string(out)))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, "model name") {
				fmt.Printf("  %s", strings.TrimSpace(line[strings.IndexByte(line, ':')+1:])+"\n")
				break
			}
		}
	}
	if out, err := exec.Command(redisBin, "--version").Output(); err == nil {
		fmt.Printf("  %s", out)
	}
	fmt.Printf("  %s %s/%s, GOMAXPROCS %d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
}
