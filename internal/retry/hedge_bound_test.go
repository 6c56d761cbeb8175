package retry_test

import (
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// TestMaxHedgesIsTheContracts: the contract's bound on
// HedgePolicy.max_hedges is retry.MaxHedges, the one bound the server's
// and the routes' settings follow.
func TestMaxHedgesIsTheContracts(t *testing.T) {
	fd := (&llmrelayv1.HedgePolicy{}).ProtoReflect().Descriptor().Fields().ByName("max_hedges")
	opts, _ := fd.Options().(*descriptorpb.FieldOptions)
	rules, _ := proto.GetExtension(opts, validate.E_Field).(*validate.FieldRules)
	if lte := rules.GetUint32().GetLte(); lte != retry.MaxHedges {
		t.Errorf("the proto bounds max_hedges to %d, retry.MaxHedges is %d", lte, retry.MaxHedges)
	}
}
