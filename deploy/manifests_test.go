package deploy_test

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
)

const manifestDir = "kubernetes"

// kustomization is the part of kustomize's Kustomization that the manifests
// use; decoding it strictly catches a misspelt field.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
}

// manifests is every object the kustomization lists, decoded strictly.
type manifests struct {
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	deployment *appsv1.Deployment
	service    *corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	hpa        *autoscalingv2.HorizontalPodAutoscaler
}

// strict decodes YAML into v, failing on unknown and duplicate fields.
func strict(t *testing.T, name string, data []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// load decodes the kustomization and every resource it lists into its
// Kubernetes API type, by apiVersion and kind; anything else fails.
func load(t *testing.T) *manifests {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	strict(t, "kustomization.yaml", data, &k)
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml is %s %s", k.APIVersion, k.Kind)
	}
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			onDisk = append(onDisk, b)
		}
	}
	listed := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(listed, onDisk) {
		t.Errorf("kustomization.yaml lists %v; the directory has %v", listed, onDisk)
	}

	m := &manifests{}
	for _, name := range k.Resources {
		data, err := os.ReadFile(filepath.Join(manifestDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "\n---") {
			t.Fatalf("%s: one object per file", name)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var obj metav1.Object
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			m.configMap = &corev1.ConfigMap{}
			obj = m.configMap
		case "v1 Secret":
			m.secret = &corev1.Secret{}
			obj = m.secret
		case "apps/v1 Deployment":
			m.deployment = &appsv1.Deployment{}
			obj = m.deployment
		case "v1 Service":
			m.service = &corev1.Service{}
			obj = m.service
		case "policy/v1 PodDisruptionBudget":
			m.pdb = &policyv1.PodDisruptionBudget{}
			obj = m.pdb
		case "autoscaling/v2 HorizontalPodAutoscaler":
			m.hpa = &autoscalingv2.HorizontalPodAutoscaler{}
			obj = m.hpa
		default:
			t.Fatalf("%s: unexpected %s %s", name, tm.APIVersion, tm.Kind)
		}
		strict(t, name, data, obj)
		for _, msg := range validation.IsDNS1123Subdomain(obj.GetName()) {
			t.Errorf("%s: name %q: %s", name, obj.GetName(), msg)
		}
		if obj.GetLabels()["app.kubernetes.io/name"] != "llmrelay" {
			t.Errorf("%s: no app.kubernetes.io/name: llmrelay label", name)
		}
	}
	if m.configMap == nil || m.secret == nil || m.deployment == nil || m.service == nil || m.pdb == nil || m.hpa == nil {
		t.Fatalf("the kustomization lacks one of ConfigMap, Secret, Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler: %+v", m)
	}
	return m
}

// TestStrictDecodingCatchesTypos: the loader this test relies on fails on
// a misspelt field, which a plain decode would drop silently.
func TestStrictDecodingCatchesTypos(t *testing.T) {
	var d appsv1.Deployment
	typo := []byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      terminationGracePeriod: 30\n")
	if err := yaml.UnmarshalStrict(typo, &d); err == nil || !strings.Contains(err.Error(), "terminationGracePeriod") {
		t.Errorf("strict decoding of a misspelt field: %v, want an error naming it", err)
	}
	dup := []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a, name: b}\n")
	if err := yaml.UnmarshalStrict(dup, &corev1.Service{}); err == nil {
		t.Error("strict decoding of a duplicate field succeeded")
	}
}

// llmrelayContainer returns the Deployment's llmrelay container.
func llmrelayContainer(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	for i, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "llmrelay" {
			return &d.Spec.Template.Spec.Containers[i]
		}
	}
	t.Fatal("the Deployment has no container named llmrelay")
	return nil
}

// containerPort returns the container's port with that name.
func containerPort(t *testing.T, c *corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("the container has no port named %q", name)
	return 0
}

// llmrelayConfig loads the ConfigMap's config file with llmrelay's loader.
func llmrelayConfig(t *testing.T, m *manifests) *config.Config {
	t.Helper()
	text, ok := m.configMap.Data[configFile]
	if !ok {
		t.Fatalf("the ConfigMap has no %s", configFile)
	}
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		t.Fatalf("the ConfigMap's %s does not load: %v", configFile, err)
	}
	return cfg
}

const configFile = "llmrelay.yaml"

func port(t *testing.T, what, hostport string) int32 {
	t.Helper()
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("%s %q: %v", what, hostport, err)
	}
	if config.IsLoopback(hostport) || host == "localhost" {
		t.Errorf("%s %q is loopback: the kubelet's probes and the Service reach the pod's IP", what, hostport)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("%s %q: %v", what, hostport, err)
	}
	return int32(n)
}

// TestConfigWiring: the ConfigMap's config loads and validates with
// llmrelay's own loader, its ports are the container's, and it is mounted
// where the image looks for it.
func TestConfigWiring(t *testing.T) {
	m := load(t)
	cfg := llmrelayConfig(t, m)
	c := llmrelayContainer(t, m.deployment)
	if got, want := port(t, "listen", cfg.Listen), containerPort(t, c, "grpc"); got != want {
		t.Errorf("the config listens on port %d; the container's grpc port is %d", got, want)
	}
	if got, want := port(t, "metrics_listen", cfg.MetricsListen), containerPort(t, c, "metrics"); got != want {
		t.Errorf("the config serves metrics on port %d; the container's metrics port is %d", got, want)
	}
	if got, want := port(t, "http_listen", cfg.HTTPListen), containerPort(t, c, "http"); got != want {
		t.Errorf("the config serves the HTTP endpoints on port %d; the container's http port is %d", got, want)
	}
	if len(cfg.Auth.Keys) == 0 {
		t.Error("the config has no auth.keys")
	}

	// The image reads $LLMRELAY_CONFIG, which the Dockerfile sets; the
	// ConfigMap must be mounted there.
	image := dockerfile(t)
	path := image.env[config.EnvConfig]
	for _, e := range c.Env {
		if e.Name == config.EnvConfig {
			path = e.Value
		}
	}
	mounted := false
	for _, vm := range c.VolumeMounts {
		for _, v := range m.deployment.Spec.Template.Spec.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == m.configMap.Name &&
				filepath.Join(vm.MountPath, configFile) == path && vm.SubPath == "" {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("the ConfigMap %s is not mounted so that %s is at %s", m.configMap.Name, configFile, path)
	}

	// Each provider's api_key_env comes from the Secret.
	fromSecret := map[string]bool{}
	for _, ef := range c.EnvFrom {
		if ef.SecretRef != nil && ef.SecretRef.Name == m.secret.Name {
			for k := range m.secret.StringData {
				fromSecret[ef.Prefix+k] = true
			}
			for k := range m.secret.Data {
				fromSecret[ef.Prefix+k] = true
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == m.secret.Name {
			fromSecret[e.Name] = true
		}
	}
	for _, p := range cfg.Providers {
		if p.APIKeyEnv != "" && !fromSecret[p.APIKeyEnv] {
			t.Errorf("provider %s reads its key from $%s, which the Secret %s does not provide", p.Name, p.APIKeyEnv, m.secret.Name)
		}
	}
}

// TestProbes: readiness and liveness use Kubernetes' gRPC probes on the
// container's grpc port, against health service names the server serves.
func TestProbes(t *testing.T) {
	m := load(t)
	c := llmrelayContainer(t, m.deployment)
	grpcPort := containerPort(t, c, "grpc")
	served := []string{"", llmrelayv1.LLMService_ServiceDesc.ServiceName}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.GRPC == nil {
			t.Errorf("%s probe: %+v, want a gRPC probe", name, p)
			continue
		}
		if p.GRPC.Port != grpcPort {
			t.Errorf("%s probe dials port %d; the container's grpc port is %d", name, p.GRPC.Port, grpcPort)
		}
		svc := ""
		if p.GRPC.Service != nil {
			svc = *p.GRPC.Service
		}
		if !slices.Contains(served, svc) {
			t.Errorf("%s probe asks for health service %q; the server reports %q", name, svc, served)
		}
		if p.TimeoutSeconds < 1 || p.PeriodSeconds < 1 || p.FailureThreshold < 1 {
			t.Errorf("%s probe: timeout, period and failure threshold must be set", name)
		}
	}
}

// TestTerminationCoversTheDrain: the kubelet sends SIGKILL
// terminationGracePeriodSeconds after the pod's deletion, preStop
// included; that must cover the server's whole shutdown (drain delay,
// grace, the wait for cut-off calls' statuses), or calls die without a
// status.
func TestTerminationCoversTheDrain(t *testing.T) {
	m := load(t)
	cfg := llmrelayConfig(t, m)
	spec := m.deployment.Spec.Template.Spec
	c := llmrelayContainer(t, m.deployment)
	var preStop time.Duration
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		h := c.Lifecycle.PreStop
		if h.Sleep == nil {
			// The image is FROM scratch: no shell or sleep to exec.
			t.Errorf("preStop %+v: only a sleep action works in the image", h)
		} else {
			preStop = time.Duration(h.Sleep.Seconds) * time.Second
		}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		t.Fatal("terminationGracePeriodSeconds is unset (the default 30s)")
	}
	if cfg.DrainDelay <= 0 {
		t.Error("drain_delay is 0: new calls are refused before endpoints and proxies let go of the pod")
	}
	got := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	if need := preStop + server.ShutdownBudget(cfg); got < need {
		t.Errorf("terminationGracePeriodSeconds is %v; preStop (%v) + drain_delay (%v) + shutdown_grace (%v) + the cut-off wait need %v",
			got, preStop, cfg.DrainDelay, cfg.ShutdownGrace, need)
	}
}

// TestRolloutCutsNoCallWithinItsDeadline: a rolling update drains each
// old pod for shutdown_grace, then cuts what still runs
// (SERVER_SHUTTING_DOWN, RESUMABLE_CALL_LOST). A call may run to
// deadlines.max: a client's longer deadline is cut to it, and an SDK's
// stream on the HTTP port runs to it (docs/http.md, "Timeouts"). A grace
// shorter than that cuts calls within their deadline on every rollout; a
// longer one costs nothing while calls are short, since the pod exits when
// its last call ends.
func TestRolloutCutsNoCallWithinItsDeadline(t *testing.T) {
	cfg := llmrelayConfig(t, load(t))
	if cfg.ShutdownGrace < cfg.Deadlines.Max {
		t.Errorf("shutdown_grace is %v, deadlines.max %v: a rolling update cuts calls still within their deadline", cfg.ShutdownGrace, cfg.Deadlines.Max)
	}
}

// TestSelectorsAndTargets: the Service, the PodDisruptionBudget and the
// HorizontalPodAutoscaler point at the Deployment's pods and ports.
func TestSelectorsAndTargets(t *testing.T) {
	m := load(t)
	d := m.deployment
	podLabels := labels.Set(d.Spec.Template.Labels)
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(podLabels) {
		t.Errorf("the Deployment's selector %v (%v) does not match its pods' labels %v", d.Spec.Selector, err, podLabels)
	}
	if len(m.service.Spec.Selector) == 0 || !labels.SelectorFromSet(m.service.Spec.Selector).Matches(podLabels) {
		t.Errorf("the Service's selector %v does not match the pods' labels %v", m.service.Spec.Selector, podLabels)
	}
	pdbSel, err := metav1.LabelSelectorAsSelector(m.pdb.Spec.Selector)
	if err != nil || pdbSel.Empty() || !pdbSel.Matches(podLabels) {
		t.Errorf("the PodDisruptionBudget's selector %v (%v) does not match the pods' labels", m.pdb.Spec.Selector, err)
	}

	c := llmrelayContainer(t, d)
	names := map[string]bool{}
	for _, p := range c.Ports {
		names[p.Name] = true
		for _, msg := range validation.IsValidPortName(p.Name) {
			t.Errorf("container port name %q: %s", p.Name, msg)
		}
	}
	sawGRPC := false
	for _, p := range m.service.Spec.Ports {
		if p.TargetPort.StrVal == "" || !names[p.TargetPort.StrVal] {
			t.Errorf("Service port %s targets %v, not a named container port (%v)", p.Name, p.TargetPort.String(), names)
		}
		if p.TargetPort.StrVal == "grpc" {
			sawGRPC = true
			if p.AppProtocol == nil || *p.AppProtocol != "kubernetes.io/h2c" {
				t.Errorf("Service port %s: appProtocol %v, want kubernetes.io/h2c (gRPC without TLS)", p.Name, p.AppProtocol)
			}
		}
	}
	if !sawGRPC {
		t.Error("the Service does not expose the grpc port")
	}

	ref := m.hpa.Spec.ScaleTargetRef
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("the HorizontalPodAutoscaler scales %+v, not the Deployment %s", ref, d.Name)
	}
	if m.hpa.Spec.MinReplicas == nil || *m.hpa.Spec.MinReplicas < 2 {
		t.Error("the HorizontalPodAutoscaler may scale to one replica: the PodDisruptionBudget would then block every node drain")
	}
	spread := map[string]bool{}
	for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
		s, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			t.Errorf("the spread over %s selects %v, not the pods", c.TopologyKey, c.LabelSelector)
		}
		spread[c.TopologyKey] = true
	}
	// One zone's or node's loss takes its share of the replicas only.
	for _, key := range []string{corev1.LabelTopologyZone, corev1.LabelHostname} {
		if !spread[key] {
			t.Errorf("the pods are not spread over %s", key)
		}
	}
	if m.pdb.Spec.MaxUnavailable == nil && m.pdb.Spec.MinAvailable == nil {
		t.Error("the PodDisruptionBudget bounds nothing")
	}
	// With the default (IfHealthyBudget), replicas that all crash-loop
	// block every node drain: none may be evicted while the budget is
	// short, and it stays short.
	if p := m.pdb.Spec.UnhealthyPodEvictionPolicy; p == nil || *p != policyv1.AlwaysAllow {
		t.Errorf("the PodDisruptionBudget's unhealthyPodEvictionPolicy is %v, want AlwaysAllow: unready replicas would block node drains", p)
	}
	for _, metric := range m.hpa.Spec.Metrics {
		if metric.Resource != nil && metric.Resource.Target.Type == autoscalingv2.UtilizationMetricType {
			if _, ok := c.Resources.Requests[corev1.ResourceName(metric.Resource.Name)]; !ok {
				t.Errorf("the HorizontalPodAutoscaler scales on %s utilization; the container requests no %s", metric.Resource.Name, metric.Resource.Name)
			}
		}
	}
}

// TestPodSecurity: the pod runs as the image's unprivileged user, with
// nothing it does not need.
func TestPodSecurity(t *testing.T) {
	m := load(t)
	spec := m.deployment.Spec.Template.Spec
	c := llmrelayContainer(t, m.deployment)
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("the pod does not require runAsNonRoot")
	}
	if psc != nil && psc.RunAsUser != nil {
		if want := dockerfile(t).user; strconv.FormatInt(*psc.RunAsUser, 10)+":"+strconv.FormatInt(*psc.RunAsGroup, 10) != want {
			t.Errorf("the pod runs as %d:%d; the image's USER is %s", *psc.RunAsUser, *psc.RunAsGroup, want)
		}
	}
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("the container's securityContext %+v: want no privilege escalation, a read-only root and every capability dropped", sc)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token it does not use")
	}
}

// TestGoRuntimeSizedFromTheResources: the Go runtime takes its sizes from
// the container's resources through the downward API: its memory limit
// from the memory request, which sits 5 to 20% below the memory limit, and
// its processors from the CPU request, which the kubelet rounds up to whole
// CPUs. GOMEMLIMIT at the memory limit itself leaves nothing for what the
// kernel charges the container beyond the runtime's count (socket
// buffers): the OOM killer then ends every stream before the GC works
// harder. A request far below the limit lets the node promise the memory
// elsewhere, and node-pressure eviction kills the pod without a drain.
// Without GOMAXPROCS a pod with no CPU limit would run one processor per
// core of its node.
func TestGoRuntimeSizedFromTheResources(t *testing.T) {
	c := llmrelayContainer(t, load(t).deployment)
	from := func(name string) *corev1.ResourceFieldSelector {
		for _, e := range c.Env {
			if e.Name == name && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil {
				ref := e.ValueFrom.ResourceFieldRef
				if ref.ContainerName != "" && ref.ContainerName != c.Name {
					t.Errorf("%s comes from container %s's resources, not %s's", name, ref.ContainerName, c.Name)
				}
				return ref
			}
		}
		t.Fatalf("the container sets no %s from its resources", name)
		return nil
	}

	if ref := from("GOMEMLIMIT"); ref.Resource != "requests.memory" {
		t.Errorf("GOMEMLIMIT comes from %s, want requests.memory", ref.Resource)
	} else if !ref.Divisor.IsZero() && ref.Divisor.Value() != 1 {
		t.Errorf("GOMEMLIMIT's divisor is %s: the runtime reads a bare number as bytes", ref.Divisor.String())
	}
	memLimit, okLimit := c.Resources.Limits[corev1.ResourceMemory]
	memRequest, okRequest := c.Resources.Requests[corev1.ResourceMemory]
	if !okLimit || !okRequest {
		t.Fatal("no memory request and limit for GOMEMLIMIT to sit between")
	}
	if ratio := float64(memRequest.Value()) / float64(memLimit.Value()); ratio < 0.8 || ratio > 0.95 {
		t.Errorf("the memory request (GOMEMLIMIT) is %s, %.0f%% of the limit %s; want 80 to 95%%: headroom for what the runtime does not count, and no overcommit",
			memRequest.String(), 100*ratio, memLimit.String())
	}

	ref := from("GOMAXPROCS")
	if ref.Resource != "requests.cpu" {
		t.Errorf("GOMAXPROCS comes from %s, want requests.cpu", ref.Resource)
	}
	request, ok := c.Resources.Requests[corev1.ResourceCPU]
	if !ok {
		t.Fatal("no CPU request for GOMAXPROCS to follow")
	}
	// The kubelet's value: the request in units of the divisor (1 when
	// unset), rounded up. Anything else is not a number GOMAXPROCS takes.
	divisor := int64(1000)
	if !ref.Divisor.IsZero() {
		divisor = ref.Divisor.MilliValue()
	}
	if divisor != 1000 {
		t.Errorf("GOMAXPROCS's divisor is %s: the runtime wants whole processors (1)", ref.Divisor.String())
	}
	if procs := (request.MilliValue() + divisor - 1) / divisor; procs < 1 {
		t.Errorf("a CPU request of %s gives GOMAXPROCS=%d", request.String(), procs)
	}
}

// image is what the Dockerfile's final stage sets.
type image struct {
	user string
	env  map[string]string
}

// dockerfile reads the final stage's USER and ENV lines.
func dockerfile(t *testing.T) image {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var img image
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			img = image{env: map[string]string{}}
		case "USER":
			img.user = fields[1]
		case "ENV":
			for _, kv := range fields[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					img.env[k] = v
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if img.user == "" || img.env[config.EnvConfig] == "" {
		t.Fatalf("the Dockerfile's final stage sets no USER or no %s", config.EnvConfig)
	}
	return img
}

// TestImageConfigRefusesToServeWithoutKeys: the config baked into the image
// listens on every interface, so llmrelay refuses it until keys are added,
// and for no other reason.
func TestImageConfigRefusesToServeWithoutKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("image", "llmrelay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = config.Parse(data)
	if err == nil || !strings.Contains(err.Error(), "refusing to serve without authentication") {
		t.Errorf("the image's config: %v, want the refusal to serve without keys", err)
	}
	withKey := string(data) + "auth:\n  keys:\n    - {name: k, sha256: \"" + strings.Repeat("ab", 32) + "\", scopes: [generate], models: [\"*\"]}\n"
	if _, err := config.Parse([]byte(withKey)); err != nil {
		t.Errorf("the image's config with a key: %v", err)
	}
}
