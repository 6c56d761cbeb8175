package interceptors

import (
	"context"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// RequestSize refuses a request whose encoded size exceeds maxBytes
// (limits.max_request_bytes) with RESOURCE_EXHAUSTED, reason
// REQUEST_TOO_LARGE, metadata max_bytes, and no RetryInfo, since the same
// request never fits. Zero maxBytes switches it off.
//
// It complements the server option grpc.MaxRecvMsgSize
// (limits.max_recv_msg_bytes), the hard cap gRPC applies while reading a
// message: gRPC answers that refusal itself, without llmrelay's ErrorInfo,
// so max_request_bytes sits below it and catches the oversized requests a
// client is likely to send with a typed error.
func RequestSize(maxBytes int) Link {
	if maxBytes <= 0 {
		return noop("request_size")
	}
	check := func(req any) error {
		m, ok := req.(proto.Message)
		if !ok || proto.Size(m) <= maxBytes {
			return nil
		}
		limit := strconv.Itoa(maxBytes)
		return statusError(codes.ResourceExhausted, ReasonRequestTooLarge,
			"the request is "+strconv.Itoa(proto.Size(m))+" bytes, over the server's limit of "+limit,
			map[string]string{"max_bytes": limit}, 0)
	}
	return Link{
		Name: "request_size",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := check(req); err != nil {
				return nil, err
			}
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, &peekStream{ServerStream: ss, onFirst: check})
		},
	}
}
