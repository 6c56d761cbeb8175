package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// TestPricingProblems: a price table names configured providers and
// models, known kinds of token and no negative price, each problem with
// its line.
func TestPricingProblems(t *testing.T) {
	const providers = "providers:\n  - {name: up, kind: mock, models: [echo]}\n"
	tests := []struct {
		name, yaml string
		want       string // the whole error text; "" for valid
	}{
		{"valid", providers + "pricing:\n  models:\n    up/echo: {input: 2.5, output: 10}\n", ""},
		{"not provider/model", providers + "pricing:\n  models:\n    echo: {input: 1, output: 1}\n",
			`config:5: pricing.models.echo: "echo" is not <provider>/<model>`},
		{"unknown provider", providers + "pricing:\n  models:\n    openai/gpt: {input: 1, output: 1}\n",
			`config:5: pricing.models.openai/gpt: no provider is named "openai"`},
		{"model the provider does not list", providers + "pricing:\n  models:\n    up/lorem: {input: 1, output: 1}\n",
			`config:5: pricing.models.up/lorem: provider "up" does not list model "lorem"`},
		{"unknown kind", providers + "pricing:\n  models:\n    up/echo: {input: 1, output: 1, thoughts: 3}\n",
			`config:5: pricing.models.up/echo: unknown kind of token "thoughts"; known: ` + strings.Join(usage.KindNames(), ", ")},
		{"output missing", providers + "pricing:\n  models:\n    up/echo: {input: 1}\n",
			`config:5: pricing.models.up/echo: output: required (the price of a million output tokens)`},
		{"a price that is not a number", providers + "pricing:\n  models:\n    up/echo: {input: cheap, output: 1}\n",
			`config:5: pricing.models.up/echo.input: want a number, not "cheap"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Parse:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestKeepRestartOnly: a reloaded config keeps the running values of the
// settings only a restart changes, and says which it had changed, down to
// the value within a section, with the running and the new value as the
// file writes them; the rest it keeps as loaded.
func TestKeepRestartOnly(t *testing.T) {
	running := Default()
	running.TLS = TLS{CertFile: "a.crt", KeyFile: "a.key"}
	running.State.Redis.Addresses = []string{"a:6379"}
	next := Default()
	next.Listen = "127.0.0.1:6000"
	next.DrainDelay = 5 * time.Second
	next.Limits.KeepaliveTime = time.Minute
	next.Limits.ProviderQueue = 7 // reloadable
	next.Log.Level = "debug"      // reloadable
	next.State.Redis.Addresses = []string{"a:6379", "b:6379"}
	next.State.Redis.TLS.Enabled = true
	next.Reload.Watch = true
	next.TLS = TLS{} // turning TLS off

	changed := next.KeepRestartOnly(running)
	want := []Change{
		{"listen", running.Listen, "127.0.0.1:6000"},
		{"drain_delay", "0s", "5s"},
		{"limits.keepalive_time", setting.Duration(running.Limits.KeepaliveTime), "1m"},
		{"state.redis.addresses", "[a:6379]", "[a:6379, b:6379]"},
		{"state.redis.tls.enabled", "false", "true"},
		{"reload.watch", "false", "true"},
		{"tls", "on", "off"},
	}
	if !slices.Equal(changed, want) {
		t.Errorf("changed\n%v\nwant\n%v", changed, want)
	}
	if next.Listen != running.Listen || next.DrainDelay != 0 || next.Limits.KeepaliveTime != running.Limits.KeepaliveTime ||
		!reflect.DeepEqual(next.State, running.State) || next.Reload.Watch || next.TLS != running.TLS {
		t.Errorf("restart-only settings not kept: %+v", next)
	}
	if next.Limits.ProviderQueue != 7 || next.Log.Level != "debug" {
		t.Error("a reloadable setting was reset")
	}
	rotated := *running
	rotated.TLS = TLS{CertFile: "b.crt", KeyFile: "b.key"}
	if changed := rotated.KeepRestartOnly(running); len(changed) != 0 || rotated.TLS.CertFile != "b.crt" {
		t.Errorf("new TLS files (a rotation) count as %v, want a reloadable change", changed)
	}
	written := Default()
	written.State.Redis.Addresses = []string{} // "addresses: []", left out in the running file
	if changed := written.KeepRestartOnly(Default()); len(changed) != 0 {
		t.Errorf("an empty list written out counts as %v, want no change", changed)
	}
}
