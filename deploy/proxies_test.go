package deploy_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/llmrelay/llmrelay/internal/config"

	// The extensions envoy.yaml names in typed_config, so that their
	// types resolve.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
)

// TestEnvoyConfigIsAValidBootstrap checks proxies/envoy.yaml as far as it
// can be without an Envoy binary (Debian has none, and Envoy is no Go
// module): it decodes, strictly, into Envoy's own v3 Bootstrap (the
// go-control-plane types generated from Envoy's API), every typed_config
// included, and passes the API's validation rules (protoc-gen-validate).
// A misspelt or misplaced field, a wrong type, an unknown extension or a
// value out of range fails here; what Envoy does with it at run time is
// not tested (docs/proxies.md says so).
func TestEnvoyConfigIsAValidBootstrap(t *testing.T) {
	b := envoyBootstrap(t)
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("envoy.yaml breaks Envoy's API rules: %v", err)
	}
	cl := b.GetStaticResources().GetClusters()
	if len(cl) != 1 || len(cl[0].GetHealthChecks()) != 1 || cl[0].GetHealthChecks()[0].GetHttpHealthCheck().GetPath() != "/readyz" {
		t.Fatal("envoy.yaml's cluster does not check /readyz")
	}
	for _, e := range cl[0].GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints() {
		if e.GetEndpoint().GetHealthCheckConfig().GetPortValue() != 9464 {
			t.Fatalf("endpoint %v is not checked on the metrics port", e.GetEndpoint().GetAddress())
		}
	}
}

// envoyBootstrap decodes proxies/envoy.yaml, strictly, into Envoy's v3
// Bootstrap.
func envoyBootstrap(t *testing.T) *bootstrapv3.Bootstrap {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("proxies", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := (protojson.UnmarshalOptions{}).Unmarshal(js, &b); err != nil {
		t.Fatalf("envoy.yaml is not an Envoy v3 Bootstrap: %v", err)
	}
	return &b
}

// TestProxiesDocShowsTheTestedFiles: docs/proxies.md shows each proxy
// configuration exactly as the tests run it.
func TestProxiesDocShowsTheTestedFiles(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "proxies.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"haproxy.cfg", "nghttpx.conf", "envoy.yaml"} {
		data, err := os.ReadFile(filepath.Join("proxies", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), "\n"+string(data)+"```\n") {
			t.Errorf("docs/proxies.md does not show proxies/%s as it is", name)
		}
	}
}

// mustOutlastEveryCall is what a proxy's stream timeouts must exceed: the
// longest a call may run, or stay silent, before llmrelay ends it with its
// own status (deadlines.max; the first event and stream idle timeouts are
// capped below it). A proxy that gives up at the same moment races that
// status, and answers with its own error, or sends the call again.
func mustOutlastEveryCall(t *testing.T, what string, d time.Duration) {
	t.Helper()
	longest := config.Default().Deadlines.Max
	if d <= longest {
		t.Errorf("%s is %v: keep it above deadlines.max (%v)", what, d, longest)
	}
}

// directives returns the values of the lines of a proxy config that start
// with name (after indentation), comments dropped.
func directives(t *testing.T, file, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("proxies", file))
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for line := range strings.Lines(string(data)) {
		line, _, _ = strings.Cut(line, "#")
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name); ok {
			values = append(values, strings.TrimSpace(rest))
		}
	}
	return values
}

// proxyDuration parses a proxy's duration: Go's units, and a bare number
// in bare (HAProxy: milliseconds; nghttpx: seconds).
func proxyDuration(t *testing.T, s string, bare time.Duration) time.Duration {
	t.Helper()
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * bare
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d
}

// TestProxyTimeoutsOutlastEveryCall: every proxy's per-stream timeouts
// exceed deadlines.max. At 10 minutes, equal to it, HAProxy's and
// nghttpx's read timeouts and Envoy's stream idle timeout raced the
// status of a call silent to its deadline.
func TestProxyTimeoutsOutlastEveryCall(t *testing.T) {
	for _, name := range []string{"timeout client", "timeout server"} {
		values := directives(t, "haproxy.cfg", name+" ")
		if len(values) != 1 {
			t.Fatalf("haproxy.cfg: %d %q lines, want 1", len(values), name)
		}
		mustOutlastEveryCall(t, "haproxy.cfg's "+name, proxyDuration(t, values[0], time.Millisecond))
	}
	for _, name := range []string{"backend-read-timeout=", "frontend-http2-read-timeout="} {
		values := directives(t, "nghttpx.conf", name)
		if len(values) != 1 {
			t.Fatalf("nghttpx.conf: %d %q lines, want 1", len(values), name)
		}
		mustOutlastEveryCall(t, "nghttpx.conf's "+strings.TrimSuffix(name, "="), proxyDuration(t, values[0], time.Second))
	}
	hcm := envoyConnectionManager(t)
	mustOutlastEveryCall(t, "envoy.yaml's stream_idle_timeout", hcm.GetStreamIdleTimeout().AsDuration())
	for _, vh := range hcm.GetRouteConfig().GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			if d := r.GetRoute().GetTimeout(); d == nil || d.AsDuration() != 0 {
				mustOutlastEveryCall(t, "envoy.yaml's route timeout (15s when unset; 0 turns it off)", d.AsDuration())
			}
		}
	}
}

// TestProxiesRetryOnlyWhatNeverReachedAReplica: a proxy may send a call
// again only when no replica received it. A call a replica received may
// be running at a provider: sending it again runs, and bills, it twice.
// HAProxy's empty-response and response-timeout (and Envoy's reset or
// 5xx) are such retries.
func TestProxiesRetryOnlyWhatNeverReachedAReplica(t *testing.T) {
	safe := map[string]bool{"conn-failure": true, "none": true}
	for _, v := range directives(t, "haproxy.cfg", "retry-on ") {
		for _, kw := range strings.Fields(v) {
			if !safe[kw] {
				t.Errorf("haproxy.cfg retries on %s: the replica received the call", kw)
			}
		}
	}
	safe = map[string]bool{"connect-failure": true, "refused-stream": true, "reset-before-request": true}
	for _, vh := range envoyConnectionManager(t).GetRouteConfig().GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			for kw := range strings.SplitSeq(r.GetRoute().GetRetryPolicy().GetRetryOn(), ",") {
				if kw = strings.TrimSpace(kw); kw != "" && !safe[kw] {
					t.Errorf("envoy.yaml retries on %s: the replica received the call", kw)
				}
			}
		}
	}
}

// envoyConnectionManager returns envoy.yaml's HTTP connection manager.
func envoyConnectionManager(t *testing.T) *hcmv3.HttpConnectionManager {
	t.Helper()
	b := envoyBootstrap(t)
	for _, l := range b.GetStaticResources().GetListeners() {
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				var hcm hcmv3.HttpConnectionManager
				if f.GetTypedConfig().UnmarshalTo(&hcm) == nil {
					return &hcm
				}
			}
		}
	}
	t.Fatal("envoy.yaml has no HTTP connection manager")
	return nil
}
