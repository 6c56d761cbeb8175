package engine

import (
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// The engine's sections of the configuration (Deadlines, Limits,
// Heartbeat): their defaults and checks.

// DefaultDeadlines returns the call deadlines' defaults.
func DefaultDeadlines() Deadlines {
	return Deadlines{Default: 120 * time.Second, Max: 600 * time.Second}
}

// Check reports the deadlines' problems. minStreamTimeout is the floor of
// an attempt's stream timeouts (the deadlines section's
// min_stream_timeout): a default deadline below it would end every call
// that sets no deadline of its own before an attempt could wait that long
// for its provider, so it is refused rather than fail those calls.
func (d Deadlines) Check(p setting.Problems, minStreamTimeout time.Duration) {
	if d.Default <= 0 {
		p.Bad("default", "must be positive")
		return
	}
	if d.Default < minStreamTimeout {
		p.Between("default", "min_stream_timeout", "%s is shorter than min_stream_timeout (%s): every call that sets no deadline would end "+
			"before an attempt could wait that long for its provider; raise default (or lower min_stream_timeout)",
			setting.Duration(d.Default), setting.Duration(minStreamTimeout))
	}
	if d.Max < d.Default {
		p.Between("max", "default", "%s is shorter than default (%s)", setting.Duration(d.Max), setting.Duration(d.Default))
	}
}

// DefaultLimits returns the engine's limits' defaults.
func DefaultLimits() Limits {
	return Limits{MaxRequestBytes: 4 << 20, ProviderQueue: 64, DefaultMaxOutputBytes: 2 << 20, MaxOutputBytes: 3 << 20}
}

// Check reports the limits' problems; maxRecvMsgBytes is the gRPC
// server's cap on a received message (max_recv_msg_bytes), which a
// request's limit must not exceed.
func (l Limits) Check(p setting.Problems, maxRecvMsgBytes int) {
	if l.MaxRequestBytes < 0 || l.MaxRequestBytes > maxRecvMsgBytes {
		p.Between("max_request_bytes", "max_recv_msg_bytes", "%d is not within 0..max_recv_msg_bytes (%d)", l.MaxRequestBytes, maxRecvMsgBytes)
	}
	if l.ProviderQueue < 0 {
		p.Bad("provider_queue", "must not be negative")
	}
	if l.MaxOutputBytes <= 0 {
		p.Bad("max_output_bytes", "must be positive")
	}
	if l.DefaultMaxOutputBytes <= 0 || l.DefaultMaxOutputBytes > l.MaxOutputBytes {
		p.Between("default_max_output_bytes", "max_output_bytes", "%d is not within 1..max_output_bytes (%d)", l.DefaultMaxOutputBytes, l.MaxOutputBytes)
	}
}

// Output returns the output limits.
func (l Limits) Output() OutputLimits {
	return OutputLimits{Default: l.DefaultMaxOutputBytes, Max: l.MaxOutputBytes}
}

// DefaultHeartbeat returns the heartbeat's defaults: off unless a request
// asks, at most one a second.
func DefaultHeartbeat() Heartbeat { return Heartbeat{MinInterval: time.Second} }

// Check reports the heartbeat's problems.
func (h Heartbeat) Check(p setting.Problems) {
	if h.MinInterval <= 0 {
		p.Bad("min_interval", "must be positive")
	} else if h.Interval < 0 || (h.Interval > 0 && h.Interval < h.MinInterval) {
		p.Between("interval", "min_interval", "%s is not 0 (off) or at least min_interval (%s)", setting.Duration(h.Interval), setting.Duration(h.MinInterval))
	}
}
