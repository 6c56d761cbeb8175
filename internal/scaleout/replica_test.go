package scaleout_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// binary is the llmrelay server built once for the package's tests.
var binary struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "llmrelay-scaleout-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary.path = filepath.Join(dir, "llmrelay")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build builds the server binary (once) and returns its path; it skips in
// -short mode.
func build(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	binary.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			binary.err = err
			return
		}
		out, err := exec.Command(gobin, "build", "-o", binary.path, "github.com/llmrelay/llmrelay/cmd/server").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// The API keys every replica knows.
const (
	keyRate    = "rate-key"    // requests_per_second 10, burst 20
	keyStreams = "streams-key" // max_concurrent_streams 4
	keyFree    = "free-key"    // no limits
	rateLimit  = 10.0
	rateBurst  = 20
	maxStreams = 4
	leaseTTL   = 3 * time.Second
)

// replicaConfig is one replica's config: its own listen addresses, the
// shared redis-server and key prefix, the failure policy, and more
// top-level settings, if any (providers, routes, retry).
func replicaConfig(listen, metricsListen, redisAddr, prefix, policy, extra string) string {
	return fmt.Sprintf(`listen: %s
metrics_listen: %s
shutdown_grace: 5s
log: {level: warn}
auth:
  keys:
    - {name: rate, sha256: %s, scopes: [generate, models.list], models: ["*"], requests_per_second: %g, burst: %d}
    - {name: streams, sha256: %s, scopes: [generate], models: ["*"], max_concurrent_streams: %d}
    - {name: free, sha256: %s, scopes: [generate, models.list], models: ["*"]}
state:
  store: redis
  redis:
    address: %s
    key_prefix: %q
    lease_ttl: %s
    health_check_interval: 200ms
    # wide: a loaded test machine must not look like an outage
    read_timeout: 3s
    write_timeout: 3s
  on_store_failure: %s
%s`, listen, metricsListen, auth.HashKey(keyRate), rateLimit, rateBurst, auth.HashKey(keyStreams), maxStreams, auth.HashKey(keyFree),
		redisAddr, prefix, leaseTTL, policy, extra)
}

// replica is one llmrelay process.
type replica struct {
	name    string
	cmd     *exec.Cmd
	addr    string
	metrics string
	conn    *grpc.ClientConn
	client  llmrelayv1.LLMServiceClient
	exited  chan struct{}
	stderr  *servertest.LockedBuffer
}

// startReplica starts the binary with a config sharing redis (under
// prefix), and extra settings if any, and waits until it is SERVING. It is
// killed at cleanup.
func startReplica(t *testing.T, name string, redis *redistest.Server, prefix, policy string, extra ...string) *replica {
	t.Helper()
	return startReplicaWith(t, name, func(listen, metricsListen string) string {
		return replicaConfig(listen, metricsListen, redis.Addr, prefix, policy, strings.Join(extra, ""))
	})
}

// startReplicaWith starts the binary with the config that config makes
// for the replica's listen and metrics addresses, and waits until it is
// SERVING. It is killed at cleanup. Every replica relays one event per
// upstream chunk, however fast a test reads (streaming.coalesce_deltas
// off): the tests name a point in a reply by its sequence number and read
// a replica's output once per chunk. A replica whose address another
// process bound first (between freeport's check and the replica's own
// bind) is started again on other ports.
func startReplicaWith(t *testing.T, name string, config func(listen, metricsListen string) string) *replica {
	t.Helper()
	bin := build(t)
	for try := 1; ; try++ {
		r := launchReplica(t, bin, name, config)
		if r.waitServing(t) {
			return r
		}
		if try == 3 || !strings.Contains(r.stderr.String(), "is already in use") {
			t.Fatalf("replica %s exited before serving:\n%s", name, r.stderr.String())
		}
		t.Logf("replica %s: its address was taken before it bound it; starting it on others", name)
	}
}

// launchReplica starts one process of the replica on free addresses and
// connects a client to it; cleanup kills it.
func launchReplica(t *testing.T, bin, name string, config func(listen, metricsListen string) string) *replica {
	t.Helper()
	r := &replica{name: name, addr: freeport.Addr(t), metrics: freeport.Addr(t), exited: make(chan struct{}), stderr: &servertest.LockedBuffer{}}
	cfgPath := filepath.Join(t.TempDir(), name+".yaml")
	cfg := config(r.addr, r.metrics) + "\nstreaming: {coalesce_deltas: false}\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, "--config", cfgPath)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			t.Logf("replica %s stderr:\n%s", r.name, r.stderr.String())
		}
	})
	var err error
	if r.conn, err = grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.conn.Close() })
	r.client = llmrelayv1.NewLLMServiceClient(r.conn)
	return r
}

// waitServing waits until the replica is SERVING (true) or has exited
// (false).
func (r *replica) waitServing(t *testing.T) bool {
	t.Helper()
	served := false
	eventually(t, fmt.Sprintf("replica %s serving or exited", r.name), func() bool {
		select {
		case <-r.exited:
			return true
		default:
		}
		served = r.health(t, "") == healthpb.HealthCheckResponse_SERVING
		return served
	})
	return served
}

// kill sends SIGKILL, as a crash or an OOM kill would, and waits for the
// process to end.
func (r *replica) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
}

// health returns the replica's health for service, or UNKNOWN when it
// does not answer.
func (r *replica) health(t *testing.T, service string) healthpb.HealthCheckResponse_ServingStatus {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(r.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN
	}
	return resp.GetStatus()
}

func (r *replica) waitHealth(t *testing.T, service string, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	eventually(t, fmt.Sprintf("replica %s health %q %v", r.name, service, want), func() bool { return r.health(t, service) == want })
}

// metric returns the sum of the samples of name (with the label set
// containing match, if any) on the replica's /metrics.
func (r *replica) metric(t *testing.T, name, match string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		t.Fatalf("replica %s /metrics: %v", r.name, err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (match != "" && !strings.Contains(line, match)) {
			continue
		}
		rest := strings.TrimPrefix(line, name)
		if rest != "" && rest[0] != ' ' && rest[0] != '{' {
			continue // another metric whose name starts with this one
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// eventually polls cond until it holds; the deadline only guards against
// hangs.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func withKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
}

// reason returns the ErrorInfo reason of err's status.
func reason(err error) string {
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei.GetReason()
		}
	}
	return ""
}

// tally counts the outcomes of calls.
type tally struct {
	mu       sync.Mutex
	admitted int
	refused  int              // RESOURCE_EXHAUSTED RATE_LIMITED
	other    map[string]int   // "CODE REASON" of anything else
	first    map[string]error // an example of each
}

func (c *tally) add(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil:
		c.admitted++
	case status.Code(err) == codes.ResourceExhausted && reason(err) == "RATE_LIMITED":
		c.refused++
	default:
		if c.other == nil {
			c.other, c.first = map[string]int{}, map[string]error{}
		}
		k := status.Code(err).String() + " " + reason(err)
		c.other[k]++
		if c.first[k] == nil {
			c.first[k] = err
		}
	}
}

// load calls ListModels with the rate-limited key on every replica from
// workers goroutines each, a call per worker every few milliseconds (far
// above the limit), until stop is closed, and tallies each replica's
// outcomes.
func load(ctx context.Context, replicas []*replica, workers int, stop <-chan struct{}) (tallies []*tally, wait func()) {
	var wg sync.WaitGroup
	tallies = make([]*tally, len(replicas))
	for i, r := range replicas {
		tallies[i] = &tally{}
		for range workers {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(withKey(ctx, keyRate), 10*time.Second)
					_, err := r.client.ListModels(cctx, &llmrelayv1.ListModelsRequest{})
					cancel()
					tallies[i].add(err)
					time.Sleep(5 * time.Millisecond)
				}
			})
		}
	}
	return tallies, wg.Wait
}

// sharedRate drains the rate key's burst, then loads every replica for
// window and returns the admitted calls per second across all of them and
// each replica's tally.
func sharedRate(t *testing.T, replicas []*replica, window time.Duration) (float64, []*tally) {
	t.Helper()
	// Drain the burst, so the window starts with an empty bucket.
	stop := make(chan struct{})
	drain, wait := load(t.Context(), replicas, 2, stop)
	eventually(t, "the burst drained", func() bool {
		for _, c := range drain {
			c.mu.Lock()
			refused := c.refused
			c.mu.Unlock()
			if refused > 0 {
				return true
			}
		}
		return false
	})
	close(stop)
	wait()

	stop = make(chan struct{})
	start := time.Now()
	tallies, wait := load(t.Context(), replicas, 2, stop)
	time.Sleep(window)
	close(stop)
	wait()
	elapsed := time.Since(start)
	admitted := 0
	for i, c := range tallies {
		for k, n := range c.other {
			t.Errorf("replica %s: %d calls ended %s, want OK or RATE_LIMITED (first: %v)", replicas[i].name, n, k, c.first[k])
		}
		admitted += c.admitted
	}
	return float64(admitted) / elapsed.Seconds(), tallies
}

// holdStream opens a long stream with the streams key and waits for its
// first event: nil once it is open (cancel ends it), or the status that
// refused it.
func holdStream(t *testing.T, r *replica) (cancel context.CancelFunc, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(withKey(t.Context(), keyStreams))
	// About 80 minutes of deltas, the first after 50ms.
	opts, _ := structpb.NewStruct(map[string]any{"words": 100000, "chunk_delay_ms": 50})
	gs, err := r.client.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model:           "mock/lorem",
		Messages:        []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hold"}},
		ProviderOptions: opts,
	})
	if err == nil {
		_, err = gs.Recv()
	}
	if err != nil {
		cancel()
		if errors.Is(err, io.EOF) {
			t.Fatalf("replica %s: a held stream ended at once", r.name)
		}
		return nil, err
	}
	t.Cleanup(cancel)
	return cancel, nil
}
