// Package service is llmrelay's gRPC door: the llmrelay.v1.LLMService
// handlers. Each converts its call into the engine's terms (the request as
// it is, the server stream as the engine's Sink), calls the engine
// (internal/engine), which decides everything about the call, and returns
// the engine's *apierr.Error, which gRPC sends as its status
// (apierr.Error.GRPCStatus, the one place an error becomes a status). The
// interceptor chain in front of it (internal/server/chain.go) runs the
// engine's admission, one link per step.
package service

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
)

// Service implements llmrelayv1.LLMServiceServer over an engine. It is
// safe for concurrent use.
type Service struct {
	llmrelayv1.UnimplementedLLMServiceServer
	eng *engine.Engine
}

// New returns the gRPC door of eng.
func New(eng *engine.Engine) *Service { return &Service{eng: eng} }

// Engine returns the engine the door calls.
func (s *Service) Engine() *engine.Engine { return s.eng }

// ListModels implements llmrelayv1.LLMServiceServer.
func (s *Service) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	return s.eng.ListModels(ctx, req)
}

// ListTools implements llmrelayv1.LLMServiceServer.
func (s *Service) ListTools(ctx context.Context, req *llmrelayv1.ListToolsRequest) (*llmrelayv1.ListToolsResponse, error) {
	return s.eng.ListTools(ctx, req)
}

// Embed implements llmrelayv1.LLMServiceServer.
func (s *Service) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest) (*llmrelayv1.EmbedResponse, error) {
	return s.eng.Embed(ctx, req)
}

// Generate implements llmrelayv1.LLMServiceServer.
func (s *Service) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	return s.eng.Generate(stream.Context(), req, sink{stream})
}

// Resume implements llmrelayv1.LLMServiceServer.
func (s *Service) Resume(req *llmrelayv1.ResumeRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	return s.eng.Resume(stream.Context(), req, sink{stream})
}

// sink is a server stream as the engine's Sink.
type sink struct {
	grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]
}

// SetHeader implements engine.Sink.
func (s sink) SetHeader(kv ...string) {
	_ = s.ServerStreamingServer.SetHeader(metadata.Pairs(kv...))
}

// SendHeader implements engine.Sink.
func (s sink) SendHeader() error { return s.ServerStreamingServer.SendHeader(nil) }
