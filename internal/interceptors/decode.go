package interceptors

import (
	"bytes"
	"strings"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/internal/apierr"
)

// A request message that does not decode (not protobuf, a string that is
// not UTF-8, nesting deeper than protobuf's limit of 10,000 levels) is the
// client's mistake, yet gRPC answers it itself, before any interceptor,
// with a bare INTERNAL: a server fault to the client, its mesh and the
// operator's alerts, without the ErrorInfo every llmrelay status carries.
// RequestCodec keeps that decision for the chain: it decodes an llmrelay
// request that fails to decode as an empty message that carries the
// decoding error (in an unknown field of its own), and the validate link
// refuses it as INVALID_ARGUMENT (INVALID_REQUEST), after auth and the
// key's limits, logged and counted like any invalid request. The note
// lives in the message, so nothing is kept for a call that ends before
// validation.

// RequestCodec returns the gRPC server's codec: gRPC's proto codec, except
// that an llmrelay request that does not decode is left to the validate
// link (undecoded). Other services' messages (health, reflection) are
// refused by gRPC as before.
func RequestCodec() encoding.CodecV2 {
	return requestCodec{encoding.GetCodecV2(grpcproto.Name)}
}

type requestCodec struct{ encoding.CodecV2 }

// undecodedField is the unknown field that carries the decoding error:
// the highest field number protobuf allows, which no llmrelay message
// uses.
const undecodedField protowire.Number = protowire.MaxValidNumber

var undecodedTag = protowire.AppendTag(nil, undecodedField, protowire.BytesType)

// Unmarshal implements encoding.CodecV2.
func (c requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok || !strings.HasPrefix(string(m.ProtoReflect().Descriptor().FullName()), "llmrelay.") {
		return err
	}
	proto.Reset(m)
	m.ProtoReflect().SetUnknown(protowire.AppendString(bytes.Clone(undecodedTag), err.Error()))
	return nil
}

// undecoded returns the error of a request RequestCodec could not decode,
// nil for any other.
func undecoded(req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	u := m.ProtoReflect().GetUnknown()
	if !bytes.HasPrefix(u, undecodedTag) {
		return nil
	}
	why, n := protowire.ConsumeString(u[len(undecodedTag):])
	if n < 0 {
		return nil
	}
	return &apierr.Error{Kind: apierr.InvalidArgument, Reason: apierr.ReasonInvalidRequest,
		Message: "the request does not decode: " + why}
}
