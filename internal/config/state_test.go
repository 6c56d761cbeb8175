package config

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

func TestStateDefaultsToMemoryFailOpen(t *testing.T) {
	cfg, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.State.Store != state.StoreMemory || cfg.State.OnStoreFailure != state.FailOpen {
		t.Errorf("state %+v, want the memory store, fail_open", cfg.State)
	}
}

// TestStateSectionAsTheIssueWritesIt parses the section in the shape the
// scale-out acceptance tests write.
func TestStateSectionAsTheIssueWritesIt(t *testing.T) {
	cfg, err := Parse([]byte(`
state:
  store: redis                  # memory (the default: today's behaviour) | redis
  redis:
    address: 127.0.0.1:6379
    password_env: LLMRELAY_REDIS_PASSWORD
    key_prefix: "llmrelay:"
    tls: {enabled: true, server_name: redis.internal}
    read_timeout: 200ms
    pool_size: 20
    lease_ttl: 5s
  on_store_failure: fail_closed   # fail_open (the default) | fail_closed
`))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.State
	if s.Store != state.StoreRedis || s.OnStoreFailure != state.FailClosed {
		t.Errorf("store %q on_store_failure %q", s.Store, s.OnStoreFailure)
	}
	r := s.Redis
	if r.Address != "127.0.0.1:6379" || r.PasswordEnv != "LLMRELAY_REDIS_PASSWORD" || r.KeyPrefix != "llmrelay:" ||
		!r.TLS.Enabled || r.TLS.ServerName != "redis.internal" || r.ReadTimeout != 200*time.Millisecond || r.PoolSize != 20 || r.LeaseTTL != 5*time.Second {
		t.Errorf("redis %+v", r)
	}
	if r.Mode != state.RedisStandalone || r.WriteTimeout != 500*time.Millisecond || r.HealthCheckInterval != time.Second {
		t.Errorf("unset redis fields lost their defaults: %+v", r)
	}
}

func TestStateRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown store", "state: {store: etcd}\n", `state.store: "etcd" is not memory or redis`},
		{"unknown policy", "state: {on_store_failure: maybe}\n", `state.on_store_failure: "maybe" is not fail_open or fail_closed`},
		{"redis without address", "state: {store: redis}\n", "state.redis.address: required"},
		{"address not host:port", "state: {store: redis, redis: {address: localhost}}\n", `state.redis.address: "localhost" is not host:port`},
		{"a port past 65535", "state: {store: redis, redis: {address: \"127.0.0.1:99999\"}}\n", `state.redis.address: "127.0.0.1:99999": the port must be a number from 1 to 65535`},
		{"a cluster node without a host", "state: {store: redis, redis: {mode: cluster, addresses: [\"127.0.0.1:7000\", \":7001\"]}}\n", `state.redis.addresses[1]: ":7001" has no host`},
		{"cluster without addresses", "state: {store: redis, redis: {mode: cluster}}\n", "state.redis.addresses: required with mode cluster"},
		{"cluster with db", "state: {store: redis, redis: {mode: cluster, addresses: ['a:1'], db: 2}}\n", "state.redis.db"},
		{"sentinel without master", "state: {store: redis, redis: {mode: sentinel, addresses: ['a:26379']}}\n", "state.redis.sentinel_master"},
		{"unknown mode", "state: {store: redis, redis: {mode: ring, address: 'a:1'}}\n", `state.redis.mode: "ring"`},
		{"brace in prefix", "state: {store: redis, redis: {address: 'a:1', key_prefix: '{x}'}}\n", "state.redis.key_prefix"},
		{"short lease", "state: {store: redis, redis: {address: 'a:1', lease_ttl: 100ms}}\n", "state.redis.lease_ttl"},
		{"zero timeout", "state: {store: redis, redis: {address: 'a:1', read_timeout: 0s}}\n", "read_timeout"},
		{"half client certificate", "state: {store: redis, redis: {address: 'a:1', tls: {enabled: true, cert_file: c.pem}}}\n", "cert_file and key_file"},
		{"tls files without enabled", "state: {store: redis, redis: {address: 'a:1', tls: {ca_file: ca.pem}}}\n", "state.redis.tls.enabled: false, but files or server_name are set"},
		{"typo", "state: {stroe: redis}\n", "state.stroe: unknown field; did you mean store?"},
		{"nothing close", "state: {where: redis}\n", "state.where: unknown field; the fields in state are on_store_failure, redis, store"},
		{"redis address without store redis", "state: {redis: {address: 'a:1'}}\n", "state.redis.address: is set, but store is memory (the default)"},
		{"cluster nodes with store memory", "state: {store: memory, redis: {mode: cluster, addresses: ['a:1']}}\n", "state.redis.addresses: are set, but store is memory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestStateProblemsNameTheirLine: a problem in the state section names the
// file and line of its setting, like every other setting's.
func TestStateProblemsNameTheirLine(t *testing.T) {
	path := writeFile(t, "listen: 127.0.0.1:50051\nstate:\n  store: redis\n  redis:\n    address: nowhere\n")
	_, err := Load(Flags{ConfigPath: path}, env(nil))
	if err == nil || !strings.Contains(err.Error(), ":5: state.redis.address: \"nowhere\" is not host:port") {
		t.Fatalf("Load: %v, want the problem on line 5", err)
	}
}

// TestARedisURLIsNotQuoted: a Redis URL pasted as the address (as
// REDIS_URL is written, its password in it) is refused without quoting
// it: the start-up error goes to the log of a crash-looping pod.
func TestARedisURLIsNotQuoted(t *testing.T) {
	const secret = "redis-url-password-9e3f"
	for _, y := range []string{
		"state: {store: redis, redis: {address: \"redis://default:" + secret + "@10.0.0.5:6379/0\"}}\n",
		"state: {store: redis, redis: {mode: cluster, addresses: [\"10.0.0.5:7000\", \"rediss://:" + secret + "@10.0.0.6:7000\"]}}\n",
		"state: {store: redis, redis: {address: \":" + secret + "@10.0.0.5:6379\"}}\n",
	} {
		_, err := Parse([]byte(y))
		if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "password_env") {
			t.Errorf("Parse: %v, want an error pointing at password_env, without the value", err)
		}
	}
}
