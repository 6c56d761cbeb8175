package server

import (
	"errors"
	"io"

	"google.golang.org/grpc"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
)

// A server-streaming call (Generate, Resume) takes exactly one request
// message. grpc-go checks that itself while receiving it, and answers a
// stream without one, or with two, with a bare INTERNAL ("cardinality
// violation") that it writes before any interceptor sees the call's end:
// a server fault to the client, its mesh and grpc_server_handled_total,
// whose INTERNAL pages the operator, for a client's bug. So llmrelay
// registers its streams with gRPC as client-streaming, which leaves the
// request's count to it, and checks it in the same place, below every
// link (oneRequestStream): the client gets INVALID_ARGUMENT
// (INVALID_REQUEST) with its ErrorInfo, as for a request that does not
// decode, and every link sees the call as the proto declares it
// (oneRequest).

// llmServiceDesc is LLMService as gRPC serves it: the generated
// description with every stream client-streaming (oneRequestStream checks
// the count instead).
var llmServiceDesc = func() grpc.ServiceDesc {
	d := llmrelayv1.LLMService_ServiceDesc
	d.Streams = make([]grpc.StreamDesc, len(d.Streams))
	for i, sd := range llmrelayv1.LLMService_ServiceDesc.Streams {
		sd.ClientStreams = true
		d.Streams[i] = sd
	}
	return d
}()

// oneRequest holds, by full method name, the methods registered as
// client-streaming whose contract is one request (llmServiceDesc), each
// with its info as the proto declares it: a stream that receives one
// request, not a stream of them. Made once, so a call's info is not
// copied.
var oneRequest = func() map[string]*grpc.StreamServerInfo {
	m := map[string]*grpc.StreamServerInfo{}
	for _, sd := range llmrelayv1.LLMService_ServiceDesc.Streams {
		if !sd.ClientStreams {
			name := "/" + llmrelayv1.LLMService_ServiceDesc.ServiceName + "/" + sd.StreamName
			m[name] = &grpc.StreamServerInfo{FullMethod: name, IsServerStream: sd.ServerStreams}
		}
	}
	return m
}()

// oneRequestStream is gRPC's stream of a call of a oneRequest method: it
// receives the call's one request, as gRPC would, and refuses a stream
// without it, or with another after it, as the client's mistake.
type oneRequestStream struct {
	grpc.ServerStream
}

// cardinalityError is the error of a stream that carried other than one
// request: how many it carried, said by what (no request message, more
// than one).
func cardinalityError(what string) error {
	return &apierr.Error{Kind: apierr.InvalidArgument, Reason: apierr.ReasonInvalidRequest,
		Message: "the stream carried " + what + ": the method takes exactly one"}
}

// RecvMsg implements grpc.ServerStream: it receives the request into m,
// then waits for the client to close its side, as gRPC does for a
// method that is not client-streaming. The handler receives once.
func (s *oneRequestStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	switch {
	case errors.Is(err, io.EOF):
		return cardinalityError("no request message")
	case err != nil:
		return err
	}
	// The end of the client's side is received into m too, as gRPC does
	// for a method that is not client-streaming: at the end nothing is
	// written to it, and a second request fails the call, whatever it
	// left in m.
	switch err := s.ServerStream.RecvMsg(m); {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return cardinalityError("more than one request message")
	default:
		return err
	}
}

// contractServices is the server's services as the proto declares them
// (grpc_type "server_stream" for Generate), for the metrics' series:
// gRPC's own info has llmServiceDesc's client-streaming methods.
type contractServices struct{ server *grpc.Server }

// GetServiceInfo implements reflection.ServiceInfoProvider.
func (c contractServices) GetServiceInfo() map[string]grpc.ServiceInfo {
	services := c.server.GetServiceInfo()
	for name, si := range services {
		methods := make([]grpc.MethodInfo, len(si.Methods))
		for i, mi := range si.Methods {
			if oneRequest["/"+name+"/"+mi.Name] != nil {
				mi.IsClientStream = false
			}
			methods[i] = mi
		}
		si.Methods = methods
		services[name] = si
	}
	return services
}
