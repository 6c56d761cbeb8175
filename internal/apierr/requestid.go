package apierr

import (
	"errors"
	"maps"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// MetaRequestID is the ErrorInfo metadata key of the call's request id,
// which every status of an API call carries (WithRequestID): the id an
// operator finds the call's log records by.
const MetaRequestID = "request_id"

// RequestIDTrailer is the trailer that carries the call's request id on
// every API call, failed or not (and the response header of a resumable
// call, which Resume takes).
const RequestIDTrailer = "llmrelay-request-id"

// WithRequestID returns err with the call's request id in its ErrorInfo
// metadata, so that a client that reports a status reports the id with
// it: an *Error is copied with the id added to its metadata; a status
// built as it is elsewhere (a resumable call's failure, replayed from its
// log) keeps its details, the id added to its ErrorInfo; anything else
// becomes its *Error first (FromError). err itself is not changed. A nil
// err, or an empty id, is returned as it is.
func WithRequestID(err error, id string) error {
	if err == nil || id == "" {
		return err
	}
	var e *Error
	if !errors.As(err, &e) {
		if st, ok := status.FromError(err); ok {
			if withID, ok := statusWithRequestID(st, id); ok {
				return withID
			}
		}
		e = FromError(err)
	}
	if e.Metadata[MetaRequestID] == id {
		return e
	}
	c := *e
	c.Metadata = make(map[string]string, len(e.Metadata)+1)
	maps.Copy(c.Metadata, e.Metadata)
	c.Metadata[MetaRequestID] = id
	return &c
}

// statusWithRequestID returns st's error with id in the metadata of its
// ErrorInfo; ok is false when st has none.
func statusWithRequestID(st *status.Status, id string) (withID error, ok bool) {
	p := st.Proto()
	for i, d := range p.GetDetails() {
		var info errdetails.ErrorInfo
		if d.UnmarshalTo(&info) != nil {
			continue
		}
		if info.Metadata == nil {
			info.Metadata = map[string]string{}
		}
		info.Metadata[MetaRequestID] = id
		detail, err := anypb.New(&info)
		if err != nil {
			return nil, false
		}
		c := proto.CloneOf(p)
		c.Details[i] = detail
		return status.ErrorProto(c), true
	}
	return nil, false
}
