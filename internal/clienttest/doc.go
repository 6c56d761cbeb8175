// Package clienttest holds the tests of the Go client (the client module,
// ../../client) that run it against a real llmrelay built from this module:
// the client module itself depends on gRPC and protobuf alone, so its own
// tests use fakes.
package clienttest
