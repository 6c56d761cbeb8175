package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// rawCodec sends a message's bytes as they are: a client whose request
// does not decode.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)      { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error { *v.(*[]byte) = data; return nil }
func (rawCodec) Name() string                       { return "proto" }

// generateRaw sends body as a Generate request and returns the error that
// ends the call (io.EOF for a call that succeeded).
func generateRaw(t *testing.T, in *servertest.Instance, body []byte) error {
	t.Helper()
	desc := &grpc.StreamDesc{ServerStreams: true}
	s, err := in.Conn.NewStream(bearer(t.Context(), keyFull), desc, llmrelayv1.LLMService_Generate_FullMethodName, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMsg(body); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	for {
		var event []byte
		if err := s.RecvMsg(&event); err != nil {
			return err
		}
	}
}

// A request that does not decode is the client's mistake, typed as every
// other: INVALID_ARGUMENT with an ErrorInfo (and the request id), not
// gRPC's bare INTERNAL, which tells a client, its mesh and the operator's
// alerts that the server failed.
func TestUndecodableRequestIsTheClients(t *testing.T) {
	in := servertest.Start(t, securedConfig())

	model := protowire.Number((&llmrelayv1.GenerateRequest{}).ProtoReflect().Descriptor().Fields().ByName("model").Number())
	notUTF8 := protowire.AppendString(protowire.AppendTag(nil, model, protowire.BytesType), "mock/\xffecho")

	// A tool's parameters nested past protobuf's decoding limit (10,000
	// levels), which a Go client marshals without complaint.
	params := &structpb.Struct{}
	for range 4000 {
		params = &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewStructValue(params)}}
	}
	deep, err := proto.Marshal(&llmrelayv1.GenerateRequest{Model: "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
		Tools:    []*llmrelayv1.Tool{{Name: "f", Parameters: params}}})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, cause string
		body        []byte
	}{
		{"not protobuf", "cannot parse invalid wire-format data", []byte{0xff, 0xff, 0xff, 0xff}},
		{"a string that is not UTF-8", "invalid UTF-8", notUTF8},
		{"nested past the decoding limit", "exceeded maximum recursion depth", deep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := wantError(t, generateRaw(t, in, tc.body), codes.InvalidArgument, "INVALID_REQUEST")
			if !strings.HasPrefix(st.Message(), "the request does not decode: ") || !strings.Contains(st.Message(), tc.cause) {
				t.Errorf("message %q", st.Message())
			}
			if _, info, _ := errorInfo(st.Err()); info.GetMetadata()["request_id"] == "" {
				t.Errorf("no request_id in %v", st)
			}
		})
	}

	t.Run("a unary call", func(t *testing.T) {
		var out []byte
		err := in.Conn.Invoke(bearer(t.Context(), keyFull), llmrelayv1.LLMService_ListModels_FullMethodName, []byte{0xff, 0xff}, &out, grpc.ForceCodec(rawCodec{}))
		wantError(t, err, codes.InvalidArgument, "INVALID_REQUEST")
	})

	t.Run("auth still comes first", func(t *testing.T) {
		desc := &grpc.StreamDesc{ServerStreams: true}
		s, err := in.Conn.NewStream(t.Context(), desc, llmrelayv1.LLMService_Generate_FullMethodName, grpc.ForceCodec(rawCodec{}))
		if err == nil {
			err = s.SendMsg([]byte{0xff, 0xff})
		}
		if err == nil {
			var event []byte
			err = s.RecvMsg(&event)
		}
		wantError(t, err, codes.Unauthenticated, "CREDENTIALS_MISSING")
	})

	t.Run("other services' requests are gRPC's to refuse", func(t *testing.T) {
		var out []byte
		err := in.Conn.Invoke(t.Context(), "/grpc.health.v1.Health/Check", []byte{0xff, 0xff}, &out, grpc.ForceCodec(rawCodec{}))
		if status.Code(err) != codes.Internal {
			t.Errorf("health check that does not decode: %v", err)
		}
		if _, err := healthpb.NewHealthClient(in.Conn).Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Errorf("a health check that decodes: %v", err)
		}
	})

	t.Run("a well-formed request streams", func(t *testing.T) {
		ok, err := proto.Marshal(&llmrelayv1.GenerateRequest{Model: "mock/echo",
			Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := generateRaw(t, in, ok); !errors.Is(err, io.EOF) {
			t.Errorf("a well-formed request: %v", err)
		}
	})
}

// A raw client whose Generate or Resume stream breaks gRPC's protocol
// (no request message, or two) made the client's mistake: INVALID_ARGUMENT
// (INVALID_REQUEST) with an ErrorInfo and the request id, counted so in
// grpc_server_handled_total, with no line at error. It was gRPC's own
// bare INTERNAL ("cardinality violation"), which the metric counted as a
// server fault: an alert on INTERNAL paged for a client's bug.
func TestAStreamWithoutOneRequestIsTheClients(t *testing.T) {
	var logs servertest.LockedBuffer
	in := servertest.Start(t, securedConfig(), server.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	ok, err := proto.Marshal(&llmrelayv1.GenerateRequest{Model: "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, rpc, why string
		requests               int
	}{
		{"Generate without a request", llmrelayv1.LLMService_Generate_FullMethodName, "Generate", "no request message", 0},
		{"Generate with two requests", llmrelayv1.LLMService_Generate_FullMethodName, "Generate", "more than one request message", 2},
		{"Resume without a request", llmrelayv1.LLMService_Resume_FullMethodName, "Resume", "no request message", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(logs.String())
			handled := func(code string) string {
				return metricValue(in, "grpc_server_handled_total", `grpc_code="`+code+`",grpc_method="`+tc.rpc+`",grpc_service="llmrelay.v1.LLMService",grpc_type="server_stream"`)
			}
			invalidBefore := handled("InvalidArgument")
			desc := &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}
			s, err := in.Conn.NewStream(bearer(t.Context(), keyFull), desc, tc.method, grpc.ForceCodec(rawCodec{}))
			if err != nil {
				t.Fatal(err)
			}
			for range tc.requests {
				if err := s.SendMsg(ok); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			var event []byte
			err = s.RecvMsg(&event)
			st := wantError(t, err, codes.InvalidArgument, "INVALID_REQUEST")
			if !strings.Contains(st.Message(), tc.why) {
				t.Errorf("message %q, want it to say %q", st.Message(), tc.why)
			}
			if _, info, _ := errorInfo(err); info.GetMetadata()["request_id"] == "" {
				t.Errorf("no request_id in %v", st)
			}
			// The status went out as the handler returned: the metric and
			// the finish line come after the client has it.
			var lines, finished []map[string]any
			eventually(t, "the finish line", func() bool {
				lines, finished = nil, nil
				for line := range strings.SplitSeq(logs.String()[before:], "\n") {
					var rec map[string]any
					if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
						continue
					}
					lines = append(lines, rec)
					if rec["msg"] == "finished call" {
						finished = append(finished, rec)
					}
				}
				return len(finished) > 0
			})
			for _, l := range lines {
				if l["level"] == "ERROR" {
					t.Errorf("a line at error: %v", l)
				}
			}
			if len(finished) != 1 || finished[0]["grpc.code"] != "InvalidArgument" || finished[0]["reason"] != "INVALID_REQUEST" {
				t.Errorf("finish lines %v; want one, code InvalidArgument, reason INVALID_REQUEST", finished)
			}
			if got := handled("Internal"); got != "0" {
				t.Errorf("grpc_server_handled_total counts %s INTERNAL, want 0", got)
			}
			if got, was := handled("InvalidArgument"), invalidBefore; got == was {
				t.Errorf("grpc_server_handled_total INVALID_ARGUMENT still %s, want one more", got)
			}
		})
	}
}
