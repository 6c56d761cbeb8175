package config

import (
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Tracing adjusts llmrelay's traces. Whether they are on, where they go
// and how they are sampled are the standard OTEL_* environment variables'
// (docs/observability.md).
type Tracing struct {
	// CaptureContent records prompts and replies on the attempt spans
	// (gen_ai.input.messages, gen_ai.output.messages,
	// gen_ai.system_instructions). Off by default: they may hold personal
	// or confidential data.
	CaptureContent bool `yaml:"capture_content"`
}

// Reload says how the server learns of a new config besides SIGHUP.
type Reload struct {
	// Watch reloads the config file when it changes (written in place,
	// replaced, or a Kubernetes ConfigMap update).
	Watch bool `yaml:"watch"`
}

// restartOnly lists the settings a reload cannot change: the listeners and
// their connection settings, the shutdown timings, the log format, the
// state store and the resumable calls' bounds, the reload watch, and
// whether TLS is on (its files are reloaded: certificates can be
// rotated).
//
// A reload logs a changed one with its running and its new value. None of
// them holds a secret: Redis's passwords are named by environment
// variable, TLS keys by file, and addresses are checked as host:port. A
// setting that can hold one belongs here only with its values left out of
// Change.
var restartOnly = []struct {
	path  string
	field func(*Config) any // a pointer to the setting
}{
	{"listen", func(c *Config) any { return &c.Listen }},
	{"http_listen", func(c *Config) any { return &c.HTTPListen }},
	{"metrics_listen", func(c *Config) any { return &c.MetricsListen }},
	{"drain_delay", func(c *Config) any { return &c.DrainDelay }},
	{"shutdown_grace", func(c *Config) any { return &c.ShutdownGrace }},
	{"log.format", func(c *Config) any { return &c.Log.Format }},
	{"limits.max_recv_msg_bytes", func(c *Config) any { return &c.Limits.MaxRecvMsgBytes }},
	{"limits.max_concurrent_streams_per_conn", func(c *Config) any { return &c.Limits.MaxConcurrentStreamsPerConn }},
	{"limits.keepalive_min_time", func(c *Config) any { return &c.Limits.KeepaliveMinTime }},
	{"limits.keepalive_time", func(c *Config) any { return &c.Limits.KeepaliveTime }},
	{"limits.keepalive_timeout", func(c *Config) any { return &c.Limits.KeepaliveTimeout }},
	{"limits.max_connection_age", func(c *Config) any { return &c.Limits.MaxConnectionAge }},
	{"limits.max_connection_age_grace", func(c *Config) any { return &c.Limits.MaxConnectionAgeGrace }},
	{"limits.stream_workers", func(c *Config) any { return &c.Limits.StreamWorkers }},
	{"state", func(c *Config) any { return &c.State }},
	{"resume", func(c *Config) any { return &c.Resume }},
	{"reload", func(c *Config) any { return &c.Reload }},
}

// Change is a restart-only setting that a loaded config changed.
type Change struct {
	// Setting is its path, down to the value that changed
	// (state.redis.address, not state).
	Setting string
	// Running and New are its value in the running config and in the
	// loaded one, written as in the config file ("30s", "[a:1, b:2]").
	Running, New string
}

// KeepRestartOnly makes c, a config loaded to replace running, keep
// running's values of the settings that only a restart can change, and
// returns those that c had changed. A reload applies the rest of c and
// logs these as needing a restart.
func (c *Config) KeepRestartOnly(running *Config) []Change {
	var changed []Change
	for _, s := range restartOnly {
		now, was := reflect.ValueOf(s.field(c)).Elem(), reflect.ValueOf(s.field(running)).Elem()
		if !reflect.DeepEqual(now.Interface(), was.Interface()) {
			appendChanges(&changed, s.path, was, now)
			now.Set(was)
		}
	}
	onOff := map[bool]string{true: "on", false: "off"}
	if c.TLS.Enabled() != running.TLS.Enabled() {
		changed = append(changed, Change{"tls", onOff[running.TLS.Enabled()], onOff[c.TLS.Enabled()]})
		c.TLS = running.TLS
	}
	if c.HTTPTLS.Enabled() != running.HTTPTLS.Enabled() {
		changed = append(changed, Change{"http_tls", onOff[running.HTTPTLS.Enabled()], onOff[c.HTTPTLS.Enabled()]})
		c.HTTPTLS = running.HTTPTLS
	}
	return changed
}

// appendChanges appends to changed each value under path that differs
// between was and now, going down a section's fields as the file names
// them.
func appendChanges(changed *[]Change, path string, was, now reflect.Value) {
	if reflect.DeepEqual(was.Interface(), now.Interface()) {
		return
	}
	t := was.Type()
	if t.Kind() != reflect.Struct || t == durationType {
		// A list left out and one written empty differ only in Go.
		if running, loaded := settingText(was), settingText(now); running != loaded {
			*changed = append(*changed, Change{path, running, loaded})
		}
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case !f.IsExported() || yamlName(f) == "-":
		case isInline(f):
			appendChanges(changed, path, was.Field(i), now.Field(i))
		default:
			appendChanges(changed, join(path, yamlName(f)), was.Field(i), now.Field(i))
		}
	}
}

// settingText writes the value v as the config file does.
func settingText(v reflect.Value) string {
	n := toNode(v)
	if n.Kind != yaml.SequenceNode {
		return n.Value
	}
	items := make([]string, len(n.Content))
	for i, item := range n.Content {
		items[i] = item.Value
	}
	return "[" + strings.Join(items, ", ") + "]"
}
