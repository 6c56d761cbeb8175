package redisstore

import (
	"crypto/tls"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/llmrelay/llmrelay/internal/capool"
	"github.com/llmrelay/llmrelay/internal/state"
)

// ClientOptions turns the config into go-redis options: a standalone
// client, a cluster client or a sentinel-backed failover client, as
// cfg.Mode says. Passwords are read from the environment variables the
// config names (getenv); a named variable that is empty is an error.
//
// Commands are never retried by the client: an admission script that ran
// but whose reply was lost must not run twice. A failed command marks the
// store unreachable instead (see Store).
func ClientOptions(cfg state.RedisConfig, getenv func(string) string) (*redis.UniversalOptions, error) {
	o := &redis.UniversalOptions{
		Username:     cfg.Username,
		DB:           cfg.DB,
		DialTimeout:  cfg.DialTimeout,
		ReadTimeout:  cfg.ReadTimeout,
		WriteTimeout: cfg.WriteTimeout,
		PoolSize:     cfg.PoolSize,
		MinIdleConns: cfg.MinIdleConns,
		MaxRetries:   -1,
		// One dial per attempt: the store's health check is the retry.
		DialerRetries: 1,
		// One round trip less per new connection: no CLIENT SETINFO, no
		// maintenance notifications (a Redis Enterprise feature).
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		ClientName:               "llmrelay",
	}
	switch cfg.Mode {
	case state.RedisCluster:
		o.Addrs, o.IsClusterMode = cfg.Addresses, true
	case state.RedisSentinel:
		o.Addrs, o.MasterName = cfg.Addresses, cfg.SentinelMaster
	default:
		o.Addrs = []string{cfg.Address}
	}
	var err error
	if o.Password, err = secret(getenv, cfg.PasswordEnv, "password_env"); err != nil {
		return nil, err
	}
	if o.SentinelPassword, err = secret(getenv, cfg.SentinelPasswordEnv, "sentinel_password_env"); err != nil {
		return nil, err
	}
	if cfg.TLS.Enabled {
		if o.TLSConfig, err = tlsConfig(cfg.TLS); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// secret reads the environment variable env names, if any.
func secret(getenv func(string) string, env, field string) (string, error) {
	if env == "" {
		return "", nil
	}
	v := getenv(env)
	if v == "" {
		return "", fmt.Errorf("state.redis.%s: $%s is empty or unset", field, env)
	}
	return v, nil
}

func tlsConfig(c state.RedisTLS) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pool, _, err := capool.Read(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("state.redis.tls.ca_file: %w", err)
		}
		cfg.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("state.redis.tls: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
