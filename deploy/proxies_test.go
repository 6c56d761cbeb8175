package deploy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	// The extensions envoy.yaml names in typed_config, so that their
	// types resolve.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
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
