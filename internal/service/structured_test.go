package service_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// sentiment is the schema.
const sentiment = `{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number"}},"required":["sentiment","score"]}`

// great is a reply that misses score and has a sentiment outside the enum.
const great = `{"sentiment":"great"}`

// structuredEcho is a mock/echo request for the schema with the given
// faults (JSON, "" for none).
func structuredEcho(t *testing.T, schema, faults string, rf *llmrelayv1.ResponseFormat) *llmrelayv1.GenerateRequest {
	t.Helper()
	req := echo(t, "Rate this review: I love it!", faults, nil)
	if rf == nil {
		rf = &llmrelayv1.ResponseFormat{}
	}
	rf.JsonSchema = jsonStruct(t, schema)
	req.ResponseFormat = rf
	return req
}

func jsonStruct(t testing.TB, doc string) *structpb.Struct {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("bad JSON %s: %v", doc, err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// outputFaults returns a fault list whose attempts reply with the texts.
func outputFaults(t *testing.T, outputs ...string) string {
	t.Helper()
	list := make([]map[string]any, len(outputs))
	for i, o := range outputs {
		list[i] = map[string]any{"output": o}
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func final(t *testing.T, events []*llmrelayv1.GenerateEvent) *llmrelayv1.Final {
	t.Helper()
	if len(events) == 0 || events[len(events)-1].GetFinal() == nil {
		t.Fatalf("the stream does not end with a Final: %v", events)
	}
	return events[len(events)-1].GetFinal()
}

// fieldViolations returns a status's BadRequest field violations as
// "field: description" lines.
func fieldViolations(st *status.Status) []string {
	var out []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField()+": "+v.GetDescription())
			}
		}
	}
	return out
}

// validationErrors renders a Final's validation errors as
// "a1 /sentiment /properties/sentiment/enum: message" lines.
func validationErrors(f *llmrelayv1.Final) []string {
	var out []string
	for _, e := range f.GetValidationErrors() {
		out = append(out, fmt.Sprintf("a%d %s %s: %s", e.GetAttempt(), e.GetInstanceLocation(), e.GetKeywordLocation(), e.GetMessage()))
	}
	return out
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

var (
	// The mock's instance of sentiment, as its deltas.
	instanceDeltas = []string{`delta a2 "{\n  "`, `delta a2 "\"score\": "`, `delta a2 "0,\n  "`, `delta a2 "\"sentiment\": "`, `delta a2 "\"positive\"\n"`, `delta a2 "}"`}
	instanceText   = "{\n  \"score\": 0,\n  \"sentiment\": \"positive\"\n}"
	// What is wrong with great.
	greatViolations = []string{`: missing required property "score"`, `/sentiment: got "great", want one of "positive", "negative"`}
	greatErrors     = []string{
		`a1  /required: missing required property "score"`,
		`a1 /sentiment /properties/sentiment/enum: got "great", want one of "positive", "negative"`,
	}
)

func TestInvalidOutputIsReasked(t *testing.T) {
	timer := &recordingTimer{}
	in := servertest.Start(t, nil, server.WithRetryTimer(timer))
	events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, outputFaults(t, great), nil))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, append(append([]string{
		`delta a1 "{\"sentiment\":\"great\"}"`,
		`will_retry a1 INVALID_OUTPUT next=2 discard=true cause=InvalidArgument/OUTPUT_VALIDATION_FAILED`,
	}, instanceDeltas...), fmt.Sprintf("final a2 attempts=2 %q", instanceText)))

	w := willRetries(events)[0]
	if d := w.GetDelay().AsDuration(); d != 0 {
		t.Errorf("the re-ask waits %v, want 0", d)
	}
	if waits := timer.Waits(); len(waits) != 1 || waits[0] != 0 {
		t.Errorf("waited %v, want one wait of 0", waits)
	}
	cause := statusOf(w.GetCause())
	sameLines(t, "the cause's field violations", fieldViolations(cause), greatViolations)
	if md := errorInfo(cause).GetMetadata(); md["attempt"] != "1" || md["provider"] != "mock" {
		t.Errorf("the cause's metadata = %v", md)
	}

	f := final(t, events)
	if got := compactJSON(f.GetObject()); got != `{"score":0,"sentiment":"positive"}` {
		t.Errorf("Final.object = %s", got)
	}
	if f.GetValidationRetries() != 1 || f.GetAttempts() != 2 {
		t.Errorf("Final: validation_retries %d, attempts %d; want 1 and 2", f.GetValidationRetries(), f.GetAttempts())
	}
	sameLines(t, "Final.validation_errors", validationErrors(f), greatErrors)

	m := in.Server.Metrics()
	if got := metricValue(t, m, "llmrelay_validation_retries_total", map[string]string{"provider": "mock"}); got != 1 {
		t.Errorf("llmrelay_validation_retries_total = %v, want 1", got)
	}
	if got := metricValue(t, m, "llmrelay_retries_total", map[string]string{"provider": "mock", "reason": "INVALID_OUTPUT"}); got != 1 {
		t.Errorf("llmrelay_retries_total{reason=INVALID_OUTPUT} = %v, want 1", got)
	}
}

func TestFirstReplyConforms(t *testing.T) {
	in := servertest.Start(t, nil)
	events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, outputFaults(t, "```json\n{\"score\": 0.5, \"sentiment\": \"negative\"}\n```"), nil))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	f := final(t, events)
	if got := compactJSON(f.GetObject()); got != `{"score":0.5,"sentiment":"negative"}` {
		t.Errorf("Final.object = %s", got)
	}
	if f.GetValidationRetries() != 0 || len(f.GetValidationErrors()) != 0 || f.GetAttempts() != 1 {
		t.Errorf("Final = %v, want one attempt and no validation errors", f)
	}
	if n := len(willRetries(events)); n != 0 {
		t.Errorf("%d WillRetry events", n)
	}
}

func TestOutputThatStaysInvalid(t *testing.T) {
	one := uint32(1)
	bad := `{"sentiment":"positive","score":"high"}`
	scoreErrors := []string{`a1 /score /properties/score/type: got string, want number`, `a2 /score /properties/score/type: got string, want number`}

	t.Run("ON_INVALID_FAIL ends the call ABORTED", func(t *testing.T) {
		for _, onInvalid := range []llmrelayv1.OnInvalid{llmrelayv1.OnInvalid_ON_INVALID_UNSPECIFIED, llmrelayv1.OnInvalid_ON_INVALID_FAIL} {
			in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
			events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, outputFaults(t, bad, bad, bad),
				&llmrelayv1.ResponseFormat{MaxValidationRetries: &one, OnInvalid: onInvalid}))
			checkStream(t, events, []string{
				fmt.Sprintf("delta a1 %q", bad),
				`will_retry a1 INVALID_OUTPUT next=2 discard=true cause=InvalidArgument/OUTPUT_VALIDATION_FAILED`,
				fmt.Sprintf("delta a2 %q", bad),
			})
			st := wantStatus(t, err, codes.Aborted, "OUTPUT_VALIDATION_FAILED", map[string]string{"attempts": "2", "provider": "mock"})
			sameLines(t, "the status's field violations", fieldViolations(st), []string{"/score: got string, want number"})
			if got := metricValue(t, in.Server.Metrics(), "llmrelay_generate_calls_total", map[string]string{"provider": "mock", "code": "Aborted"}); got != 1 {
				t.Errorf("llmrelay_generate_calls_total{code=Aborted} = %v, want 1", got)
			}
		}
	})
	t.Run("ON_INVALID_RETURN_TEXT ends with the text and the errors", func(t *testing.T) {
		in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
		events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, outputFaults(t, bad, bad, bad),
			&llmrelayv1.ResponseFormat{MaxValidationRetries: &one, OnInvalid: llmrelayv1.OnInvalid_ON_INVALID_RETURN_TEXT}))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		f := final(t, events)
		if f.GetMessage().GetContent() != bad || f.Object != nil {
			t.Errorf("Final message %q, object %v; want the last reply's text and no object", f.GetMessage().GetContent(), f.GetObject())
		}
		if f.GetValidationRetries() != 1 || f.GetAttempts() != 2 {
			t.Errorf("Final: validation_retries %d, attempts %d; want 1 and 2", f.GetValidationRetries(), f.GetAttempts())
		}
		sameLines(t, "Final.validation_errors", validationErrors(f), scoreErrors)
	})
	t.Run("max_validation_retries 0 never re-asks", func(t *testing.T) {
		zero := uint32(0)
		in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
		events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, outputFaults(t, "not JSON at all"),
			&llmrelayv1.ResponseFormat{MaxValidationRetries: &zero}))
		checkStream(t, events, []string{`delta a1 "not "`, `delta a1 "JSON "`, `delta a1 "at "`, `delta a1 "all"`})
		st := wantStatus(t, err, codes.Aborted, "OUTPUT_VALIDATION_FAILED", map[string]string{"attempts": "1"})
		if vs := fieldViolations(st); len(vs) != 1 || !strings.HasPrefix(vs[0], ": not valid JSON") {
			t.Errorf("field violations %q, want one about the whole reply not being JSON", vs)
		}
	})
	t.Run("the server caps max_validation_retries", func(t *testing.T) {
		cfg := config.Default()
		cfg.StructuredOutput.DefaultValidationRetries, cfg.StructuredOutput.MaxValidationRetries = 0, 1
		ten := uint32(10)
		in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
		events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, outputFaults(t, bad, bad, bad, bad),
			&llmrelayv1.ResponseFormat{MaxValidationRetries: &ten}))
		if n := len(willRetries(events)); n != 1 {
			t.Errorf("re-asked %d times, want the server's limit of 1", n)
		}
		wantStatus(t, err, codes.Aborted, "OUTPUT_VALIDATION_FAILED", map[string]string{"attempts": "2"})
	})
}

func TestInvalidSchemaFailsBeforeAnyProviderCall(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		limit   int // max_schema_bytes; 0 for the default
		message string
	}{
		{"a bad keyword value", `{"type": 12}`, 0, "invalid JSON Schema at '/type'"},
		{"a nested bad keyword", `{"type":"object","properties":{"score":{"minimum":"zero"}}}`, 0, "'/properties/score/minimum'"},
		{"a remote reference", `{"$ref":"https://example.com/schema.json"}`, 0, "'/$ref'"},
		{"a schema over the size limit", sentiment, 64, "too large"},
		{"a $ref fan-out no reply could be checked against (1,947 bytes)", refFanOut(30), 0, "fan-out"},
		{"a $ref to itself", `{"$ref":"#"}`, 0, "reference cycle"},
		{"two $defs that refer to each other", `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, 0, "'/$defs/"},
		{"a property whose allOf comes back to it", `{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},` +
			`"$defs":{"x":{"anyOf":[{"type":"string"},{"allOf":[{"$ref":"#/$defs/x"}]}]}}}`, 0, "reference cycle"},
		{"a schema no value satisfies", `{"type":"string","minLength":5,"maxLength":2}`, 0,
			"invalid JSON Schema at '': no value can satisfy the schema: \"type\" allows only string; minLength 5 is greater than maxLength 2"},
		{"a required property no value satisfies", `{"type":"object","required":["score"],"properties":{"score":{"type":"integer","minimum":10,"maximum":3}}}`, 0,
			"invalid JSON Schema at '/properties/score': no value can satisfy this subschema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newScripted(t)
			cfg := scriptedConfig(t)
			if tt.limit > 0 {
				cfg.StructuredOutput.MaxSchemaBytes = tt.limit
			}
			in := servertest.Start(t, cfg)
			req := structuredEcho(t, tt.schema, "", nil)
			req.Model = "scripted/any"
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if len(events) != 0 {
				t.Errorf("got events %v", events)
			}
			st := wantStatus(t, err, codes.InvalidArgument, "INVALID_SCHEMA", nil)
			if !strings.Contains(st.Message(), tt.message) {
				t.Errorf("message = %q, want it to name %s", st.Message(), tt.message)
			}
			if vs := fieldViolations(st); len(vs) != 1 || !strings.HasPrefix(vs[0], "response_format.json_schema: ") {
				t.Errorf("field violations %q, want one on response_format.json_schema", vs)
			}
			if n := len(p.Requests()); n != 0 {
				t.Errorf("the provider was called %d times", n)
			}
		})
	}
}

// refFanOut is a schema whose n $defs each apply the next twice under
// anyOf: checking a value that fails them evaluates 2^(n+1) subschemas.
func refFanOut(n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, n))
	return `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/d0"}`
}

// TestReplyPastTheValidationBudgetEndsTheCall: a reply whose check would
// take more than structured_output.validation_budget is neither accepted
// nor re-asked: the call ends INVALID_ARGUMENT, INVALID_SCHEMA, after the
// one attempt.
func TestReplyPastTheValidationBudgetEndsTheCall(t *testing.T) {
	reply := "[" + strings.Repeat("1,", 299) + "1]"
	p := newScripted(t, step{events: []provider.Event{{Kind: provider.EventText, Text: reply}}, err: io.EOF})
	cfg := scriptedConfig(t)
	cfg.StructuredOutput.ValidationBudget = 500
	in := servertest.Start(t, cfg)
	req := structuredEcho(t, `{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}}`, "", nil)
	req.Model = "scripted/any"
	events, err := servertest.Collect(t.Context(), in.Client, req)
	checkStream(t, events, []string{fmt.Sprintf("delta a1 %q", reply)})
	st := wantStatus(t, err, codes.InvalidArgument, "INVALID_SCHEMA", nil)
	if !strings.Contains(st.Message(), "validation budget") {
		t.Errorf("message = %q, want it to say the budget was spent", st.Message())
	}
	if n := len(p.Requests()); n != 1 {
		t.Errorf("the provider was called %d times, want once", n)
	}
}

func TestTransportRetriesDuringAReask(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, `[{"output":"{\"sentiment\":\"great\"}"},{"drop_after":1}]`, nil))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	a3 := make([]string, len(instanceDeltas))
	for i, d := range instanceDeltas {
		a3[i] = strings.Replace(d, "a2", "a3", 1)
	}
	checkStream(t, events, append(append([]string{
		`delta a1 "{\"sentiment\":\"great\"}"`,
		`will_retry a1 INVALID_OUTPUT next=2 discard=true cause=InvalidArgument/OUTPUT_VALIDATION_FAILED`,
		`delta a2 "{\n  "`,
		`will_retry a2 TRANSPORT next=3 discard=true cause=Unavailable/PROVIDER_TRANSPORT_ERROR`,
	}, a3...), fmt.Sprintf("final a3 attempts=3 %q", instanceText)))
	f := final(t, events)
	if f.GetValidationRetries() != 1 {
		t.Errorf("Final.validation_retries = %d, want 1", f.GetValidationRetries())
	}
	sameLines(t, "Final.validation_errors", validationErrors(f), greatErrors)
}

// TestReasksDoNotUseUpMaxAttempts: max_attempts bounds the attempts that
// fail in transport; re-asks come on top.
func TestReasksDoNotUseUpMaxAttempts(t *testing.T) {
	tests := []struct {
		name        string
		maxAttempts uint32
		faults      string
		attempts    string // the Final's or the status's
		fails       bool
	}{
		{"max_attempts 1 still re-asks", 1, outputFaults(t, great), "2", false},
		{"a transport retry after a re-ask", 2, `[{"output":"{\"sentiment\":\"great\"}"},{"status":503}]`, "3", false},
		{"a transport retry before a re-ask", 2, `[{"status":503},{"output":"{\"sentiment\":\"great\"}"}]`, "3", false},
		{"transport retries are counted over the whole call", 2, `[{"status":503},{"output":"{\"sentiment\":\"great\"}"},{"status":503}]`, "3", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
			req := structuredEcho(t, sentiment, tt.faults, nil)
			req.Retry = attempts(tt.maxAttempts)
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if tt.fails {
				wantStatus(t, err, codes.Unavailable, "RETRIES_EXHAUSTED", map[string]string{"attempts": tt.attempts})
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if f := final(t, events); fmt.Sprint(f.GetAttempts()) != tt.attempts || f.GetValidationRetries() != 1 || f.GetObject() == nil {
				t.Errorf("Final: attempts %d, validation_retries %d, object %v; want %s, 1 and the object",
					f.GetAttempts(), f.GetValidationRetries(), f.GetObject(), tt.attempts)
			}
		})
	}
}

func TestReaskRequest(t *testing.T) {
	text := func(s string) provider.Event { return provider.Event{Kind: provider.EventText, Text: s} }
	bad := `{"sentiment":"great","score":"high"}`
	p := newScripted(t,
		step{events: []provider.Event{text(bad[:10]), text(bad[10:])}, err: io.EOF},
		step{events: []provider.Event{text(`{"sentiment":"negative","score":-1}`)}, err: io.EOF},
	)
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(&recordingTimer{}))
	req := structuredEcho(t, sentiment, "", &llmrelayv1.ResponseFormat{Name: "review"})
	req.Model = "scripted/any"
	req.Tools = []*llmrelayv1.Tool{{Name: "lookup"}}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := compactJSON(final(t, events).GetObject()); got != `{"score":-1,"sentiment":"negative"}` {
		t.Errorf("Final.object = %s", got)
	}

	reqs := p.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the provider received %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.ResponseFormat == nil || r.ResponseFormat.Name != "review" || !sameJSON(string(r.ResponseFormat.Schema), sentiment) {
			t.Errorf("request %d: response format %+v, want the schema named review", i+1, r.ResponseFormat)
		}
		if len(r.Tools) != 0 {
			t.Errorf("request %d offers tools %v with a schema set", i+1, r.Tools)
		}
	}
	first, second := reqs[0].Messages, reqs[1].Messages
	if len(first) != 1 || len(second) != 3 || !reflect.DeepEqual(second[0], first[0]) {
		t.Fatalf("messages %+v then %+v, want the conversation, then it with the reply and the errors", first, second)
	}
	if second[1].Role != provider.RoleAssistant || second[1].Content != bad {
		t.Errorf("the re-ask's second message = %+v, want the invalid reply as the assistant's", second[1])
	}
	reask := second[2]
	for _, line := range []string{"at '/score': got string, want number", `at '/sentiment': got "great", want one of "positive", "negative"`, "only the corrected JSON"} {
		if reask.Role != provider.RoleUser || !strings.Contains(reask.Content, line) {
			t.Errorf("the re-ask message (%v) lacks %q:\n%s", reask.Role, line, reask.Content)
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

func TestPartialObjects(t *testing.T) {
	t.Run("follow the reply as it is read", func(t *testing.T) {
		text := func(s string) provider.Event { return provider.Event{Kind: provider.EventText, Text: s} }
		newScripted(t, step{events: []provider.Event{
			text(`{"sco`), text(`re": 0.`), text(`9, "sentiment": "pos`), text(`it`), text(`ive"`), text(`}`),
		}, err: io.EOF})
		in := servertest.Start(t, scriptedConfig(t))
		req := structuredEcho(t, sentiment, "", &llmrelayv1.ResponseFormat{StreamPartialObjects: true})
		req.Model = "scripted/any"
		events, err := servertest.Collect(t.Context(), in.Client, req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		// No number before it is complete, no key without its value. "it"
		// only grows a string and the snapshots so far (61 bytes) are over
		// 2 × the 34 bytes of text: it waits for the string to complete.
		checkStream(t, events, []string{
			`delta a1 "{\"sco"`,
			`partial a1 {}`,
			`delta a1 "re\": 0."`,
			`delta a1 "9, \"sentiment\": \"pos"`,
			`partial a1 {"score":0.9,"sentiment":"pos"}`,
			`delta a1 "it"`,
			`delta a1 "ive\""`,
			`partial a1 {"score":0.9,"sentiment":"positive"}`,
			`delta a1 "}"`,
			`final a1 attempts=1 "{\"score\": 0.9, \"sentiment\": \"positive\"}"`,
		})
	})
	t.Run("are never wrong and are discarded with their attempt", func(t *testing.T) {
		const nested = `{"type":"object","properties":{"title":{"type":"string","minLength":12},"tags":{"type":"array","items":{"type":"string"},"minItems":3},` +
			`"author":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":18}},"required":["name","age"]}},"required":["title","tags","author"]}`
		in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
		events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, nested, `[{"output":"{\"title\": \"short\", \"tags\": [\"a\"]}"}]`,
			&llmrelayv1.ResponseFormat{StreamPartialObjects: true}))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		f := final(t, events).GetObject().AsInterface()
		var seen, lastAttempt int
		for _, ev := range events {
			if w := ev.GetWillRetry(); w != nil && !w.GetDiscardPartial() {
				t.Errorf("a WillRetry after partial objects does not discard them: %v", w)
			}
			p := ev.GetPartialObject()
			if p == nil {
				continue
			}
			seen++
			if ev.GetAttempt() == 2 {
				lastAttempt++
				if !prefixOf(p.AsInterface(), f) {
					t.Errorf("partial object %s is not a prefix of the final object %s", compactJSON(p), compactJSON(final(t, events).GetObject()))
				}
			}
		}
		if lastAttempt < 5 || seen == lastAttempt {
			t.Errorf("%d partial objects, %d of them from the successful attempt: want several from each attempt", seen, lastAttempt)
		}
	})
	t.Run("are not sent unless asked for", func(t *testing.T) {
		in := servertest.Start(t, nil)
		events, err := servertest.Collect(t.Context(), in.Client, structuredEcho(t, sentiment, "", nil))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		for _, ev := range events {
			if ev.GetPartialObject() != nil {
				t.Fatalf("a partial object without stream_partial_objects: %v", ev)
			}
		}
	})
}

// prefixOf reports whether the partial value p shows nothing the complete
// value v does not hold: strings are prefixes, arrays are prefixes whose
// elements are prefixes, object keys are v's with prefix values, and
// everything else is equal.
func prefixOf(p, v any) bool {
	switch p := p.(type) {
	case string:
		s, ok := v.(string)
		return ok && strings.HasPrefix(s, p)
	case []any:
		a, ok := v.([]any)
		if !ok || len(p) > len(a) {
			return false
		}
		for i := range p {
			if !prefixOf(p[i], a[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, pv := range p {
			mv, ok := m[k]
			if !ok || !prefixOf(pv, mv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(p, v)
}

// TestOpenAIUpstreamReceivesTheSchema runs a structured-output call through
// the gRPC server to an openai-kind provider and checks what the upstream
// received: the schema as response_format, and the re-ask.
func TestOpenAIUpstreamReceivesTheSchema(t *testing.T) {
	const strictSchema = `{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number"}},"required":["sentiment","score"],"additionalProperties":false}`
	tests := []struct {
		name, schema string
		strict       bool
	}{
		{"a schema outside the strict subset", sentiment, false},
		{"a schema in the strict subset", strictSchema, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := []string{great, `{"sentiment":"positive","score":0.75}`}
			u := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
				return pt.Reply{Body: openAIStream(t, replies[min(n, len(replies)-1)])}
			})
			cfg := config.Default()
			cfg.Providers = []provider.Config{{Name: "openai", Kind: "openai", BaseURL: u.URL + "/v1"}}
			in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
			req := structuredEcho(t, tt.schema, "", &llmrelayv1.ResponseFormat{Name: "review"})
			req.Model = "openai/gpt-4o-mini"
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			f := final(t, events)
			if got := compactJSON(f.GetObject()); got != `{"score":0.75,"sentiment":"positive"}` || f.GetValidationRetries() != 1 {
				t.Errorf("Final.object = %s, validation_retries %d", got, f.GetValidationRetries())
			}

			got := u.Requests()
			if len(got) != 2 {
				t.Fatalf("the upstream received %d requests, want 2", len(got))
			}
			for i, r := range got {
				var body struct {
					ResponseFormat struct {
						Type       string `json:"type"`
						JSONSchema struct {
							Name   string          `json:"name"`
							Schema json.RawMessage `json:"schema"`
							Strict bool            `json:"strict"`
						} `json:"json_schema"`
					} `json:"response_format"`
					Messages []struct {
						Role    string `json:"role"`
						Content string `json:"content"`
					} `json:"messages"`
					Tools []any `json:"tools"`
				}
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatalf("request %d is not JSON: %v", i+1, err)
				}
				rf := body.ResponseFormat
				if rf.Type != "json_schema" || rf.JSONSchema.Name != "review" || rf.JSONSchema.Strict != tt.strict || !sameJSON(string(rf.JSONSchema.Schema), tt.schema) {
					t.Errorf("request %d: response_format %s, want json_schema %q with the schema and strict %v", i+1, r.Body, "review", tt.strict)
				}
				if wantMsgs := 1 + 2*i; len(body.Messages) != wantMsgs {
					t.Errorf("request %d has %d messages, want %d", i+1, len(body.Messages), wantMsgs)
				}
			}
		})
	}
}

// openAIStream returns a Chat Completions stream whose reply is text, cut
// in two deltas.
func openAIStream(t *testing.T, text string) []byte {
	t.Helper()
	half := len(text) / 2
	return openAIStreamDeltas(t, text[:half], text[half:])
}

// openAIStreamDeltas returns a Chat Completions stream whose reply is the
// deltas, one chunk each.
func openAIStreamDeltas(t *testing.T, deltas ...string) []byte {
	t.Helper()
	var b strings.Builder
	chunk := func(delta map[string]any, finish any) {
		c, err := json.Marshal(map[string]any{"object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, d := range deltas {
		chunk(map[string]any{"content": d}, nil)
	}
	chunk(map[string]any{}, "stop")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}
