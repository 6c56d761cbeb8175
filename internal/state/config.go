package state

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// Store kinds (Config.Store).
const (
	StoreMemory = "memory"
	StoreRedis  = "redis"
)

// Failure policies (Config.OnStoreFailure).
const (
	// FailOpen admits calls with local (per-replica) limits while the
	// store is unreachable.
	FailOpen = "fail_open"
	// FailClosed refuses calls with UNAVAILABLE while the store is
	// unreachable, and the server reports NOT_SERVING for readiness.
	FailClosed = "fail_closed"
)

// Redis deployment modes (RedisConfig.Mode).
const (
	RedisStandalone = "standalone"
	RedisCluster    = "cluster"
	RedisSentinel   = "sentinel"
)

// Config is the `state` section of llmrelay's configuration.
type Config struct {
	// Store is memory (the default: this process only) or redis.
	Store string `yaml:"store"`
	// Redis configures the redis store.
	Redis RedisConfig `yaml:"redis"`
	// OnStoreFailure is fail_open (the default) or fail_closed: what
	// happens to calls while the store is unreachable or too slow.
	OnStoreFailure string `yaml:"on_store_failure"`
}

// RedisConfig configures the connection to Redis and the shared state kept
// there.
type RedisConfig struct {
	// Mode is standalone (the default), cluster or sentinel.
	Mode string `yaml:"mode"`
	// Address is the standalone server's host:port.
	Address string `yaml:"address"`
	// Addresses are the seed nodes of a cluster, or the sentinels.
	Addresses []string `yaml:"addresses"`
	// SentinelMaster is the master's name, in sentinel mode.
	SentinelMaster string `yaml:"sentinel_master"`
	// Username is the ACL user, if any.
	Username string `yaml:"username"`
	// PasswordEnv names the environment variable holding the password;
	// the password itself is never in the config.
	PasswordEnv string `yaml:"password_env"`
	// SentinelPasswordEnv names the environment variable holding the
	// sentinels' password, in sentinel mode.
	SentinelPasswordEnv string `yaml:"sentinel_password_env"`
	// DB is the database number (standalone and sentinel).
	DB int `yaml:"db"`
	// KeyPrefix starts every key llmrelay writes, so that several
	// deployments can share one Redis (and ACLs can name their keys).
	KeyPrefix string `yaml:"key_prefix"`
	// TLS configures transport security to Redis.
	TLS RedisTLS `yaml:"tls"`
	// DialTimeout bounds opening a connection.
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// ReadTimeout and WriteTimeout bound one command; a slower store
	// counts as unreachable (see on_store_failure).
	ReadTimeout  time.Duration `yaml:"read_timeout"`
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// PoolSize is the most connections per Redis node; 0 picks go-redis's
	// default (10 per CPU).
	PoolSize int `yaml:"pool_size"`
	// MinIdleConns keeps this many connections open while idle.
	MinIdleConns int `yaml:"min_idle_conns"`
	// LeaseTTL is how long a stream's lease outlives the last renewal by
	// its replica: a crashed replica's streams are released within it. A
	// live replica renews its leases every LeaseTTL/3.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// HealthCheckInterval is how often the store is pinged, to notice an
	// outage while idle and a recovery while unreachable.
	HealthCheckInterval time.Duration `yaml:"health_check_interval"`
}

// RedisTLS configures TLS to Redis. CertFile and KeyFile (a client
// certificate) go together.
type RedisTLS struct {
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM bundle to verify the server with; empty uses the
	// system roots.
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName overrides the name verified in the server's certificate.
	ServerName string `yaml:"server_name"`
}

// DefaultConfig returns the defaults: the memory store, fail_open, and the
// Redis settings used when store is redis.
func DefaultConfig() Config {
	return Config{
		Store:          StoreMemory,
		OnStoreFailure: FailOpen,
		Redis: RedisConfig{
			Mode:                RedisStandalone,
			KeyPrefix:           "llmrelay:",
			DialTimeout:         time.Second,
			ReadTimeout:         500 * time.Millisecond,
			WriteTimeout:        500 * time.Millisecond,
			LeaseTTL:            10 * time.Second,
			HealthCheckInterval: time.Second,
		},
	}
}

// Check reports every problem of the section to bad, each with the path of
// its setting below "state." ("store", "redis.address") and what is wrong.
func (c Config) Check(p setting.Problems) {
	bad := p.Bad
	switch c.OnStoreFailure {
	case FailOpen, FailClosed:
	default:
		bad("on_store_failure", "%s", setting.NotOneOf(c.OnStoreFailure, FailOpen, FailClosed))
	}
	switch c.Store {
	case StoreMemory:
		// A Redis named with the store left in memory (store unset, say)
		// would leave each replica on limits of its own, N times the
		// fleet's, without a word; refused as TLS files without
		// redis.tls.enabled are.
		if c.Redis.Address != "" {
			p.Between("redis.address", "store", "is set, but store is memory (the default), which keeps the limits in each replica: set store: redis to share them through this Redis, or leave state.redis out")
		}
		if len(c.Redis.Addresses) > 0 {
			p.Between("redis.addresses", "store", "are set, but store is memory (the default), which keeps the limits in each replica: set store: redis to share them through these nodes, or leave state.redis out")
		}
		return
	case StoreRedis:
	default:
		bad("store", "%s", setting.NotOneOf(c.Store, StoreMemory, StoreRedis))
		return
	}

	r := c.Redis
	hostPort := func(path, addr string) {
		if strings.Contains(addr, "@") {
			// A URL with its password (REDIS_URL's form): never quoted,
			// since the error reaches the log.
			bad(path, "holds credentials (user info before an @, as in a redis:// URL; the value is not shown): give host:port here, the password in password_env and the user in username")
			return
		}
		host, port, err := net.SplitHostPort(addr)
		switch n, perr := strconv.Atoi(port); {
		case err != nil:
			bad(path, "%q is not host:port", addr)
		case host == "":
			bad(path, "%q has no host: name the Redis server, as in 127.0.0.1:6379", addr)
		case perr != nil || n < 1 || n > 65535:
			bad(path, "%q: the port must be a number from 1 to 65535, as in 127.0.0.1:6379", addr)
		}
	}
	switch r.Mode {
	case RedisStandalone:
		if r.Address == "" {
			bad("redis.address", "required with store redis (host:port)")
		} else {
			hostPort("redis.address", r.Address)
		}
		if len(r.Addresses) > 0 {
			bad("redis.addresses", "only for mode cluster or sentinel; a standalone server is redis.address")
		}
	case RedisCluster, RedisSentinel:
		if len(r.Addresses) == 0 {
			bad("redis.addresses", "required with mode %s", r.Mode)
		}
		for i, a := range r.Addresses {
			hostPort(fmt.Sprintf("redis.addresses[%d]", i), a)
		}
		if r.Address != "" {
			bad("redis.address", "not used with mode %s: list the nodes in redis.addresses", r.Mode)
		}
	default:
		bad("redis.mode", "%s", setting.NotOneOf(r.Mode, RedisStandalone, RedisCluster, RedisSentinel))
	}
	if (r.Mode == RedisSentinel) != (r.SentinelMaster != "") {
		bad("redis.sentinel_master", "required with mode sentinel, and only then")
	}
	if r.Mode == RedisCluster && r.DB != 0 {
		bad("redis.db", "a cluster has only database 0")
	}
	if r.DB < 0 {
		bad("redis.db", "must not be negative")
	}
	if strings.ContainsAny(r.KeyPrefix, "{}") {
		bad("redis.key_prefix", "%q must not contain { or }: llmrelay puts each key's hash tag after it", r.KeyPrefix)
	}
	if (r.TLS.CertFile == "") != (r.TLS.KeyFile == "") {
		bad("redis.tls", "cert_file and key_file go together")
	}
	if !r.TLS.Enabled && (r.TLS.CAFile != "" || r.TLS.CertFile != "" || r.TLS.ServerName != "") {
		bad("redis.tls.enabled", "false, but files or server_name are set: set enabled: true")
	}
	for _, d := range []struct {
		path string
		v    time.Duration
	}{{"redis.dial_timeout", r.DialTimeout}, {"redis.read_timeout", r.ReadTimeout}, {"redis.write_timeout", r.WriteTimeout}, {"redis.health_check_interval", r.HealthCheckInterval}} {
		if d.v <= 0 {
			bad(d.path, "must be positive")
		}
	}
	if r.PoolSize < 0 {
		bad("redis.pool_size", "must not be negative")
	}
	if r.MinIdleConns < 0 {
		bad("redis.min_idle_conns", "must not be negative")
	}
	if r.LeaseTTL < time.Second {
		bad("redis.lease_ttl", "%v is shorter than 1s", r.LeaseTTL)
	}
}
