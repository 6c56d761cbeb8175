package scaleout_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// The proxy configurations docs/proxies.md documents, which the tests run
// as they are but for their addresses.
var proxyConfigs = filepath.Join("..", "..", "deploy", "proxies")

// proxyFleet is replicas sharing a redis-server, each with a slow provider
// (resumable calls longer than a drain) and a fast one (the load).
type proxyFleet struct {
	replicas []*replica
	slow     *openaitest.Server
}

// The replicas' keys: one for every call of these tests.
const proxyKey = "proxy-key"

// startFleet starts n replicas with drain_delay and shutdown_grace.
func startFleet(t *testing.T, n int, drainDelay, grace time.Duration, slowChunks int, chunkDelay time.Duration) *proxyFleet {
	t.Helper()
	redis := redistest.Start(t)
	slow := openaitest.Start(t, openaitest.Options{Chunks: slowChunks, ChunkDelay: chunkDelay})
	fast := openaitest.Start(t, openaitest.Options{Chunks: 5})
	f := &proxyFleet{slow: slow}
	for i := range n {
		f.replicas = append(f.replicas, startReplicaWith(t, fmt.Sprintf("r%d", i+1), func(listen, metricsListen string) string {
			return fmt.Sprintf(`listen: %s
metrics_listen: %s
drain_delay: %s
shutdown_grace: %s
log: {level: warn}
providers:
  - {name: slow, kind: openai, base_url: %s, models: [fake-model]}
  - {name: fast, kind: openai, base_url: %s, models: [fake-model]}
auth:
  keys:
    - {name: k, sha256: %s, scopes: [generate], models: ["*"]}
state:
  store: redis
  redis: {address: %s, key_prefix: "proxies:", read_timeout: 3s, write_timeout: 3s}
`, listen, metricsListen, drainDelay, grace, slow.URL(), fast.URL(), auth.HashKey(proxyKey), redis.Addr)
		}))
	}
	return f
}

// startHAProxy runs HAProxy with deploy/proxies/haproxy.cfg, its frontend
// and servers moved to loopback addresses (server i: replica i, checked on
// its metrics listener), and returns the frontend's address.
func startHAProxy(t *testing.T, replicas []*replica) string {
	t.Helper()
	bin := servertest.Program(t, "haproxy", "haproxy")
	conf, err := os.ReadFile(filepath.Join(proxyConfigs, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	front := freeport.Addr(t)
	text := strings.Replace(string(conf), "bind :50051", "bind "+front, 1)
	servers := regexp.MustCompile(`(?m)^    server llmrelay-(\d) 10\.0\.0\.1\d:50051 check-proto h1$`)
	if got := len(servers.FindAllString(text, -1)); got != len(replicas) {
		t.Fatalf("haproxy.cfg has %d servers, the test %d replicas", got, len(replicas))
	}
	text = servers.ReplaceAllStringFunc(text, func(line string) string {
		i := int(servers.FindStringSubmatch(line)[1][0] - '1')
		_, port, _ := net.SplitHostPort(replicas[i].metrics)
		return fmt.Sprintf("    server llmrelay-%d %s check-proto h1 port %s", i+1, replicas[i].addr, port)
	})
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs servertest.LockedBuffer
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	servertest.StartProgram(t, cmd, front, logs.String)
	return front
}

// readyz returns the HTTP status of the replica's /readyz.
func (r *replica) readyz(t *testing.T) int {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// steadyLoad sends ordinary (not resumable) calls through conn from
// workers goroutines until stop is closed, and returns their outcomes.
func steadyLoad(conn *grpc.ClientConn, workers int, stop <-chan struct{}) (*tally, func()) {
	var wg sync.WaitGroup
	tl := &tally{}
	stub := llmrelayv1.NewLLMServiceClient(conn)
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(withKey(context.Background(), proxyKey), 30*time.Second)
				_, err := readEvents(must(stub.Generate(ctx, &llmrelayv1.GenerateRequest{
					Model: "fast/fake-model", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "go"}},
				})))
				cancel()
				tl.add(err)
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	return tl, wg.Wait
}

// resumableCall is one Go client call of the drain tests, and what its
// screen showed.
type resumableCall struct {
	final    *llmrelayv1.Final
	err      error
	screen   string
	reissued int
}

// collectResumable runs one resumable call through c to its end, with
// re-issues allowed, keeping a screen as a user interface would: deltas
// appended, the discarded text of a lost call taken back.
func collectResumable(ctx context.Context, c *client.Client, started func()) resumableCall {
	var res resumableCall
	var screen strings.Builder
	stream, err := c.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model: "slow/fake-model", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "go"}},
		Resumable: proto.Bool(true),
	})
	if err != nil {
		res.err = err
		return res
	}
	var once sync.Once
	res.final, res.err = client.Collect(stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) {
			screen.WriteString(d.GetText())
			once.Do(started)
		},
		OnReissue: func(_ error, discarded string) {
			res.reissued++
			rest := strings.TrimSuffix(screen.String(), discarded)
			screen.Reset()
			screen.WriteString(rest)
		},
	})
	res.screen = screen.String()
	return res
}

// TestDrainBehindHAProxy (issue 24): three replicas on a shared
// redis-server behind HAProxy with the documented configuration; one is
// drained (SIGTERM) under load while 30 resumable calls longer than its
// drain (drain_delay 3s + shutdown_grace 1s; each call takes 6s) run
// through the Go client, which may send a lost call's request again.
// /readyz turns 503 at the start of the drain; no ordinary call of the
// load fails; every resumable call ends with its whole reply, shown once:
// those the drained replica ran were lost at its cut-off
// (RESUMABLE_CALL_LOST) and sent again to the others.
func TestDrainBehindHAProxy(t *testing.T) {
	testStopBehind(t, startHAProxy, syscall.SIGTERM)
}

// TestCrashBehindHAProxy: the same when the replica is killed (kill -9)
// instead: the resumable calls it ran are found lost at once by the
// replicas their clients resume on, and sent again; of the load, only the
// calls it was running fail (as many as there are load workers, at most),
// none that HAProxy sent it after.
func TestCrashBehindHAProxy(t *testing.T) {
	testStopBehind(t, startHAProxy, syscall.SIGKILL)
}

// loadWorkers is how many goroutines send the ordinary load.
const loadWorkers = 4

// testStopBehind stops one of three replicas behind the proxy that
// startProxy starts with sig (SIGTERM: a drain; SIGKILL: a crash) while
// resumable calls and a load run through it.
func testStopBehind(t *testing.T, startProxy func(*testing.T, []*replica) string, sig syscall.Signal) {
	const calls, chunks = 30, 60
	f := startFleet(t, 3, 3*time.Second, time.Second, chunks, 100*time.Millisecond)
	front := startProxy(t, f.replicas)
	c, err := client.New(front, client.WithInsecure(), client.WithAPIKey(proxyKey))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := grpc.NewClient(front, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, r := range f.replicas {
		if code := r.readyz(t); code != http.StatusOK {
			t.Fatalf("replica %s /readyz %d before the drain", r.name, code)
		}
	}

	stop := make(chan struct{})
	load, waitLoad := steadyLoad(conn, loadWorkers, stop)
	var started sync.WaitGroup
	started.Add(calls)
	results := make(chan resumableCall, calls)
	for range calls {
		go func() { results <- collectResumable(t.Context(), c, started.Done) }()
	}
	started.Wait() // every call streams
	drained := f.replicas[0]
	running := drained.metric(t, "grpc_server_started_total", `grpc_method="Generate"`) - drained.metric(t, "grpc_server_handled_total", `grpc_method="Generate"`)
	if err := drained.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig == syscall.SIGTERM {
		eventually(t, "the drained replica's /readyz 503", func() bool { return drained.readyz(t) == http.StatusServiceUnavailable })
	}
	var ok, reissued atomic.Int32
	for range calls {
		res := <-results
		if res.err != nil {
			t.Errorf("a resumable call: %v", res.err)
			continue
		}
		if res.final.GetMessage().GetContent() != openaitest.Text(chunks) || res.screen != openaitest.Text(chunks) {
			t.Errorf("a resumable call: final %q, screen %q; want the whole reply once", res.final.GetMessage().GetContent(), res.screen)
			continue
		}
		ok.Add(1)
		reissued.Add(int32(res.reissued))
	}
	<-drained.exited
	close(stop)
	waitLoad()
	failed := 0
	for _, n := range load.other {
		failed += n
	}
	t.Logf("resumable calls: %d whole, %d sent again after %s (the stopped replica ran %v calls); load: %d calls, other outcomes %v",
		ok.Load(), reissued.Load(), sig, running, load.admitted, load.other)
	if most := map[syscall.Signal]int{syscall.SIGTERM: 0, syscall.SIGKILL: loadWorkers}[sig]; failed > most || load.admitted == 0 {
		t.Fatalf("the load through the proxy: %d calls served, %d failed (at most %d may: those the replica ran when it died): %v (e.g. %v)",
			load.admitted, failed, most, load.other, load.first)
	}
	if reissued.Load() == 0 {
		t.Fatal("no call was lost to the drain: the drained replica ran none of the 30, or they outlasted nothing; the test proves nothing")
	}
}

// startNghttpx runs nghttpx with deploy/proxies/nghttpx.conf, its frontend
// and backends moved to loopback addresses, and returns the frontend's
// address.
func startNghttpx(t *testing.T, replicas []*replica) string {
	t.Helper()
	bin := servertest.Program(t, "nghttpx", "nghttp2-proxy")
	conf, err := os.ReadFile(filepath.Join(proxyConfigs, "nghttpx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	front := freeport.Addr(t)
	host, port, _ := net.SplitHostPort(front)
	text := strings.Replace(string(conf), "frontend=*,50051;", "frontend="+host+","+port+";", 1)
	backends := regexp.MustCompile(`(?m)^backend=10\.0\.0\.1(\d),50051;`)
	if got := len(backends.FindAllString(text, -1)); got != len(replicas) {
		t.Fatalf("nghttpx.conf has %d backends, the test %d replicas", got, len(replicas))
	}
	text = backends.ReplaceAllStringFunc(text, func(line string) string {
		i := int(backends.FindStringSubmatch(line)[1][0] - '1')
		h, p, _ := net.SplitHostPort(replicas[i].addr)
		return "backend=" + h + "," + p + ";"
	})
	path := filepath.Join(t.TempDir(), "nghttpx.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs servertest.LockedBuffer
	cmd := exec.Command(bin, "--conf="+path, "--single-process")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	servertest.StartProgram(t, cmd, front, logs.String)
	return front
}

// TestDrainBehindNghttpx: the same drain behind nghttpx with the
// documented configuration.
func TestDrainBehindNghttpx(t *testing.T) {
	testStopBehind(t, startNghttpx, syscall.SIGTERM)
}

// TestCrashBehindNghttpx: the same crash behind nghttpx.
func TestCrashBehindNghttpx(t *testing.T) {
	testStopBehind(t, startNghttpx, syscall.SIGKILL)
}
