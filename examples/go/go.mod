// The Go examples, a module of their own, as a program of yours would be:
// it requires the client module and nothing of the server's. Until
// github.com/llmrelay/llmrelay/client is published, build it against a
// checkout with a replace (docs/clients.md#go); make test-clients does so in
// a copy.
module github.com/llmrelay/llmrelay/examples/go

go 1.26.0

require (
	github.com/llmrelay/llmrelay/client v0.1.0
	google.golang.org/protobuf v1.36.12
)
