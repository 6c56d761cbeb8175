package main

import (
	"bytes"
	"strings"
	"testing"
)

// perfScript is perf script's output (-F ip,sym) for five samples,
// shortened from a recording of llmrelay and the floor at concurrency 1
// (2026-11-28): a check of the chain's on an offstack worker, an event
// sent through the chain's stream wrappers, a chain step run as the
// request arrives, the floor's handler receiving its request, and sysmon
// asleep in the kernel.
const perfScript = "\n" +
	"\t          af93c0 github.com/llmrelay/llmrelay/internal/engine.RequestSize.Check-fm\n" +
	"\t          b10a62 github.com/llmrelay/llmrelay/internal/interceptors.runChecks\n" +
	"\t          b105fa github.com/llmrelay/llmrelay/internal/interceptors.(*peekStream).check.func1\n" +
	"\t          b0f1e2 github.com/llmrelay/llmrelay/internal/offstack.runTask\n" +
	"\t          b0f0a1 github.com/llmrelay/llmrelay/internal/offstack.work\n" +
	"\t           93a41 runtime.goexit.abi0\n" +
	"\n" +
	"\t           1a2b3 runtime.mallocgc\n" +
	"\t          53aa10 google.golang.org/grpc.(*serverStream).SendMsg\n" +
	"\t          b17c01 github.com/llmrelay/llmrelay/internal/interceptors.(*monitoredStream).SendMsg\n" +
	"\t          b105fb github.com/llmrelay/llmrelay/internal/interceptors.(*peekStream).SendMsg\n" +
	"\t          a0c0d0 github.com/llmrelay/llmrelay/internal/engine.(*emitter).deliver\n" +
	"\t          53bce8 google.golang.org/grpc.(*Server).processRPC\n" +
	"\t          53dc10 google.golang.org/grpc.(*Server).handleStream\n" +
	"\t           93a41 runtime.goexit.abi0\n" +
	"\n" +
	"\t          b0fe79 github.com/llmrelay/llmrelay/internal/interceptors.(*callLog).started\n" +
	"\t          b105fa github.com/llmrelay/llmrelay/internal/interceptors.(*peekStream).RecvMsg\n" +
	"\t          580fb7 github.com/llmrelay/llmrelay/client/gen/llmrelay/v1._LLMService_Generate_Handler\n" +
	"\t          53bce8 google.golang.org/grpc.(*Server).processRPC\n" +
	"\t          53dc10 google.golang.org/grpc.(*Server).handleStream\n" +
	"\t           93a41 runtime.goexit.abi0\n" +
	"\n" +
	"\t          3c4d5e google.golang.org/protobuf/internal/impl.(*MessageInfo).unmarshalPointer\n" +
	"\t          53b001 google.golang.org/grpc.(*serverStream).RecvMsg\n" +
	"\t          580fb7 github.com/llmrelay/llmrelay/client/gen/llmrelay/v1._LLMService_Generate_Handler\n" +
	"\t          53bce8 google.golang.org/grpc.(*Server).processRPC\n" +
	"\t          53dc10 google.golang.org/grpc.(*Server).handleStream\n" +
	"\t           93a41 runtime.goexit.abi0\n" +
	"\n" +
	"\tffffffff8225fd19 pvm_irq_enable\n" +
	"\tffffffff81000130 entry_SYSCALL_64_after_hwframe\n" +
	"\t           7b2c1 runtime.usleep.abi0\n" +
	"\t           5e3a0 runtime.sysmon\n" +
	"\t           5d001 runtime.mstart.abi0\n"

func TestPerfSamplesSplitByPartOfTheCall(t *testing.T) {
	var got []string
	if err := perfStacks(strings.NewReader(perfScript), func(stack []string) {
		got = append(got, callPart(stack))
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{partValidation, partSend, partChain, partRecv, partSysmon}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("parts:\n got %q\nwant %q", got, want)
	}
}

func TestHandlerPartByInnermostFrame(t *testing.T) {
	handler := []string{
		"github.com/llmrelay/llmrelay/internal/engine.(*call).runAttempt",
		"github.com/llmrelay/llmrelay/internal/interceptors.(*flatChain).handle",
		"google.golang.org/grpc.(*Server).processRPC",
		"google.golang.org/grpc.(*Server).handleStream",
	}
	for _, c := range []struct {
		inner []string
		want  string
	}{
		{[]string{"runtime.newobject", "github.com/llmrelay/llmrelay/internal/engine.startStallTimer"}, partEngine},
		{[]string{"github.com/llmrelay/llmrelay/internal/provider/httpx.appendRequest", "github.com/llmrelay/llmrelay/internal/provider/openai.(*Provider).Stream"}, partAdapter},
		// offstack's hand-off is its caller's part.
		{[]string{"runtime.chansend1", "github.com/llmrelay/llmrelay/internal/offstack.Run", "github.com/llmrelay/llmrelay/internal/provider/httpx.encodeBody"}, partAdapter},
		{[]string{"github.com/llmrelay/llmrelay/internal/metrics.(*Metrics).FirstToken"}, partMetrics},
		// The server's codec codes the message gRPC sends or receives.
		{[]string{"google.golang.org/protobuf/internal/impl.(*MessageInfo).sizePointerSlow", "github.com/llmrelay/llmrelay/internal/interceptors.(*requestCodec).Marshal", "google.golang.org/grpc.encode", "google.golang.org/grpc.(*serverStream).SendMsg"}, partSend},
		{[]string{"github.com/llmrelay/llmrelay/internal/interceptors.requestCodec.Unmarshal", "google.golang.org/grpc.(*serverStream).RecvMsg"}, partRecv},
		{[]string{"github.com/llmrelay/llmrelay/internal/retry.(*Plan).start"}, partEngine},
		{[]string{"main.(*floorService).Generate"}, partFloor},
		{nil, partEngine},
	} {
		if got := callPart(append(append([]string{}, c.inner...), handler...)); got != c.want {
			t.Errorf("%q: %q, want %q", c.inner, got, c.want)
		}
	}
	if got := callPart([]string{"runtime.memmove", "google.golang.org/grpc.(*Server).processRPC", "google.golang.org/grpc.(*Server).handleStream"}); got != partHandler {
		t.Errorf("grpc-go's own frames: %q, want %q", got, partHandler)
	}
}

func TestPrintPerfPerStream(t *testing.T) {
	var b bytes.Buffer
	// 1,000 samples over 100 streams: ten samples' CPU a stream.
	printPerf(&b, []perfSplit{{name: "llmrelay", streams: 100, total: 1000, parts: map[string]int{partEngine: 1000}}})
	out := b.String()
	per := us(10 * perfPeriod)
	for _, want := range []string{"| engine (call, plan, relay loop) | " + per + " |", "| **all** | " + per + " |"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, partSysmon) {
		t.Errorf("a part with no samples is listed:\n%s", out)
	}
}
