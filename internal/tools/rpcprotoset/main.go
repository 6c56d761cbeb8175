// Command rpcprotoset writes the descriptors of google/rpc/status.proto and
// google/rpc/error_details.proto, as compiled into
// google.golang.org/genproto/googleapis/rpc at the version go.mod pins, as a
// FileDescriptorSet. `make generate` feeds it to protoc
// (--descriptor_set_in) to generate the TypeScript and Python google.rpc
// types, so every client decodes ErrorInfo, RetryInfo and BadRequest from
// the very descriptors the server encodes them with. (The googleapis copy
// that `make protodeps` takes from grpc-gateway for the Go build predates
// ErrorInfo.)
//
//	go run ./internal/tools/rpcprotoset -o FILE
package main

import (
	"flag"
	"fmt"
	"os"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: rpcprotoset -o FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(*out, descriptorSet(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "rpcprotoset:", err)
		os.Exit(1)
	}
}

// descriptorSet returns the serialized set, deterministically. It holds the
// two files only: their imports are well-known types, which protoc has.
func descriptorSet() []byte {
	set := &descriptorpb.FileDescriptorSet{}
	for _, fd := range []protoreflect.FileDescriptor{
		status.File_google_rpc_status_proto,
		errdetails.File_google_rpc_error_details_proto,
	} {
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		panic(err) // a descriptor always marshals
	}
	return b
}
