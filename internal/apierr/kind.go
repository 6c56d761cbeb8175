package apierr

import "strconv"

// Kind is what kind of failure an Error is, in the canonical error space
// that gRPC, google.rpc.Code and AIP-193 share (and that an HTTP door maps
// onto HTTP statuses). Domain code says what went wrong with a Kind and
// never names a transport's status: the gRPC door turns a Kind into a
// status in one place (GRPCStatus, in bound.go). Kinds are numbered as
// google.rpc.Code numbers its codes, and String spells them as grpc-go's
// codes.Code does, so that metric labels and log lines read the same.
type Kind uint32

// Kinds, numbered as google.rpc.Code.
const (
	OK                 Kind = 0
	Canceled           Kind = 1
	Unknown            Kind = 2
	InvalidArgument    Kind = 3
	DeadlineExceeded   Kind = 4
	NotFound           Kind = 5
	AlreadyExists      Kind = 6
	PermissionDenied   Kind = 7
	ResourceExhausted  Kind = 8
	FailedPrecondition Kind = 9
	Aborted            Kind = 10
	OutOfRange         Kind = 11
	Unimplemented      Kind = 12
	Internal           Kind = 13
	Unavailable        Kind = 14
	DataLoss           Kind = 15
	Unauthenticated    Kind = 16
)

var kindNames = [...]string{
	OK: "OK", Canceled: "Canceled", Unknown: "Unknown", InvalidArgument: "InvalidArgument",
	DeadlineExceeded: "DeadlineExceeded", NotFound: "NotFound", AlreadyExists: "AlreadyExists",
	PermissionDenied: "PermissionDenied", ResourceExhausted: "ResourceExhausted",
	FailedPrecondition: "FailedPrecondition", Aborted: "Aborted", OutOfRange: "OutOfRange",
	Unimplemented: "Unimplemented", Internal: "Internal", Unavailable: "Unavailable",
	DataLoss: "DataLoss", Unauthenticated: "Unauthenticated",
}

// String returns the kind's name ("InvalidArgument"), as grpc-go's
// codes.Code spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Code(" + strconv.FormatUint(uint64(k), 10) + ")"
}
