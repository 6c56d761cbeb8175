package client

import _ "embed"

// ServiceConfig is llmrelay's recommended gRPC service config, the one New
// dials with (published as docs/service-config.json for other languages).
// It retries UNAVAILABLE on ListModels, and on Generate before its first
// event (gRPC retries a call only until it has received something), with
// exponential backoff, and throttles retries when most calls fail.
//
//go:embed service_config.json
var ServiceConfig string
