package client

import _ "embed"

// ServiceConfig is llmrelay's recommended gRPC service config, the one New
// dials with (published as docs/service-config.json for other languages).
// It retries UNAVAILABLE on ListModels, ListTools and Embed, and on
// Generate and Resume before their first event (gRPC retries a call only until it has received
// something), with
// exponential backoff, and throttles retries when most calls fail. grpc-go
// follows the server's pushback (grpc-retry-pushback-ms): llmrelay says -1,
// do not retry, on every failure it decided not to retry itself, so only
// a draining server, a busy provider queue or a failing hop in between is
// retried (docs/retries.md).
//
//go:embed service_config.json
var ServiceConfig string
