package config

import "reflect"

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

// KeepRestartOnly makes c, a config loaded to replace running, keep
// running's values of the settings that only a restart can change, and
// returns the paths of those that c had changed. A reload applies the rest
// of c and logs these as needing a restart.
func (c *Config) KeepRestartOnly(running *Config) []string {
	var changed []string
	for _, s := range restartOnly {
		now, was := reflect.ValueOf(s.field(c)).Elem(), reflect.ValueOf(s.field(running)).Elem()
		if !reflect.DeepEqual(now.Interface(), was.Interface()) {
			changed = append(changed, s.path)
			now.Set(was)
		}
	}
	if c.TLS.Enabled() != running.TLS.Enabled() {
		changed = append(changed, "tls")
		c.TLS = running.TLS
	}
	if c.HTTPTLS.Enabled() != running.HTTPTLS.Enabled() {
		changed = append(changed, "http_tls")
		c.HTTPTLS = running.HTTPTLS
	}
	return changed
}
