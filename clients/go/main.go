// Command scenarios runs the client scenarios (clients/scenarios.md) with
// llmrelay's Go client. make test-clients builds it in a fresh module that
// requires the client module with one replace to this checkout, and runs it
// against a real server: one line per scenario, "ok NAME: ..." or
// "FAIL NAME: ...".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

const (
	text       = "the quick brown fox jumps over the lazy dog"
	resumeText = "a resumable call keeps running on the server when the connection drops and the client picks it up again " +
		"after the last event it received so that nothing is lost and nothing is repeated"
)

func main() {
	addr, cutAddr, key := os.Getenv("LLMRELAY_ADDR"), os.Getenv("LLMRELAY_CUT_ADDR"), os.Getenv("LLMRELAY_API_KEY")
	relay := dial(addr, key)
	anonymous := dial(addr, "")
	cut := dial(cutAddr, key)
	scenarios := []struct {
		name string
		run  func(ctx context.Context) (string, error)
	}{
		{"stream", func(ctx context.Context) (string, error) { return stream(ctx, relay) }},
		{"retry", func(ctx context.Context) (string, error) { return retry(ctx, relay) }},
		{"resume", func(ctx context.Context) (string, error) { return resume(ctx, cut) }},
		{"field-violations", func(ctx context.Context) (string, error) { return fieldViolations(ctx, relay) }},
		{"deadline", func(ctx context.Context) (string, error) { return deadline(ctx, relay) }},
		{"pushback", func(ctx context.Context) (string, error) { return pushback(ctx, relay) }},
		{"unauthenticated", func(ctx context.Context) (string, error) { return unauthenticated(ctx, anonymous) }},
		{"server-tools", func(ctx context.Context) (string, error) { return serverTools(ctx, relay) }},
		{"structured", func(ctx context.Context) (string, error) { return structured(ctx, relay) }},
		{"embed", func(ctx context.Context) (string, error) { return embed(ctx, relay) }},
		{"models", func(ctx context.Context) (string, error) { return models(ctx, relay) }},
	}
	failed := 0
	for _, s := range scenarios {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		detail, err := s.run(ctx)
		cancel()
		if err != nil {
			failed++
			fmt.Printf("FAIL %s: %v\n", s.name, err)
			continue
		}
		fmt.Printf("ok %s: %s\n", s.name, detail)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

func dial(addr, key string) *client.Client {
	opts := []client.Option{client.WithInsecure()}
	if key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	c, err := client.New(addr, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return c
}

func echo(content string, options map[string]any) *llmrelayv1.GenerateRequest {
	req := &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: content}},
	}
	if options != nil {
		s, err := structpb.NewStruct(options)
		if err != nil {
			panic(err)
		}
		req.ProviderOptions = s
	}
	return req
}

func stream(ctx context.Context, c *client.Client) (string, error) {
	s, err := c.Generate(ctx, echo("hello brave new world", nil))
	if err != nil {
		return "", err
	}
	var n uint64
	var shown strings.Builder
	var final *llmrelayv1.Final
	for ev, err := range s.Events() {
		if err != nil {
			return "", err
		}
		if n++; ev.GetSequence() != n {
			return "", fmt.Errorf("event %d has sequence %d", n, ev.GetSequence())
		}
		shown.WriteString(ev.GetDelta().GetText())
		if ev.GetFinal() != nil {
			final = ev.GetFinal()
		}
	}
	if content := final.GetMessage().GetContent(); shown.String() != content || content != "hello brave new world" {
		return "", fmt.Errorf("text %q, final %q", shown.String(), content)
	}
	return fmt.Sprintf("%d events, text equals the final: %q", n, final.GetMessage().GetContent()), nil
}

func retry(ctx context.Context, c *client.Client) (string, error) {
	req := echo(text, map[string]any{"faults": []any{map[string]any{"drop_after": 2}}})
	req.Retry = &llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(50 * time.Millisecond)}
	s, err := c.Generate(ctx, req)
	if err != nil {
		return "", err
	}
	var discards []string
	var shown strings.Builder
	final, err := client.Collect(s, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) { shown.WriteString(d.GetText()) },
		OnWillRetry: func(w *llmrelayv1.WillRetry, discarded string) {
			if w.GetDiscardPartial() {
				discards = append(discards, discarded)
				shown.Reset()
			}
		},
	})
	if err != nil {
		return "", err
	}
	if !slices.Equal(discards, []string{"the quick "}) {
		return "", fmt.Errorf("discarded %q", discards)
	}
	if content := final.GetMessage().GetContent(); shown.String() != content || content != text {
		return "", fmt.Errorf("text %q, final %q", shown.String(), content)
	}
	return fmt.Sprintf("one will_retry, discarded %q, text equals the final after %d attempts", discards[0], final.GetAttempts()), nil
}

func resume(ctx context.Context, c *client.Client) (string, error) {
	req := echo(resumeText, map[string]any{"chunk_delay_ms": 25})
	req.Resumable = new(true)
	s, err := c.Generate(ctx, req)
	if err != nil {
		return "", err
	}
	// The stream refuses a gap in the sequence numbers (ErrEventsMissing)
	// and skips what it returned already: the text must come out whole.
	var streamed strings.Builder
	final, err := client.Collect(s, &client.Hooks{OnDelta: func(d *llmrelayv1.Delta) { streamed.WriteString(d.GetText()) }})
	if err != nil {
		return "", err
	}
	switch {
	case s.Resumes() == 0:
		return "", errors.New("the connection was never cut, or the stream did not resume")
	case streamed.String() != resumeText:
		return "", fmt.Errorf("streamed %q, want the reply once", streamed.String())
	case final.GetMessage().GetContent() != resumeText:
		return "", fmt.Errorf("final %q", final.GetMessage().GetContent())
	}
	return fmt.Sprintf("resumed %d time(s); the reply streamed once, whole, and equals the final", s.Resumes()), nil
}

// failure runs req to its end and returns its *client.Error.
func failure(ctx context.Context, c *client.Client, req *llmrelayv1.GenerateRequest) (*client.Error, error) {
	s, err := c.Generate(ctx, req)
	if err == nil {
		_, err = client.Collect(s, nil)
	}
	var e *client.Error
	if !errors.As(err, &e) {
		return nil, fmt.Errorf("want a *client.Error, got %v", err)
	}
	return e, nil
}

func fieldViolations(ctx context.Context, c *client.Client) (string, error) {
	req := echo("no role", nil)
	req.Messages[0].Role = llmrelayv1.Role_ROLE_UNSPECIFIED
	e, err := failure(ctx, c, req)
	if err != nil {
		return "", err
	}
	var fields []string
	for _, v := range e.FieldViolations {
		fields = append(fields, v.GetField())
	}
	if e.Code != codes.InvalidArgument || e.Reason != "INVALID_REQUEST" || !slices.Contains(fields, "messages[0].role") {
		return "", fmt.Errorf("%v; violations %v", e, fields)
	}
	return fmt.Sprintf("%s %s, violations %s", codeName(e.Code), e.Reason, strings.Join(fields, ", ")), nil
}

func deadline(ctx context.Context, c *client.Client) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	e, err := failure(ctx, c, echo("slow", map[string]any{"faults": []any{map[string]any{"first_delay_ms": 60000}}}))
	if err != nil {
		return "", err
	}
	if e.Code != codes.DeadlineExceeded {
		return "", e
	}
	return codeName(e.Code) + " after a 500ms deadline", nil
}

func pushback(ctx context.Context, c *client.Client) (string, error) {
	req := echo("hi", map[string]any{"faults": []any{map[string]any{"status": 503, "should_retry": false}}})
	req.RequestId = uuid.NewString()
	e, err := failure(ctx, c, req)
	if err != nil {
		return "", err
	}
	if e.Code != codes.Unavailable || e.Reason != "PROVIDER_RETRY_DISALLOWED" || e.RequestID != req.GetRequestId() {
		return "", fmt.Errorf("%w (request id %q, want %q)", e, e.RequestID, req.GetRequestId())
	}
	return fmt.Sprintf("%s %s, not called again request_id=%s", codeName(e.Code), e.Reason, e.RequestID), nil
}

func unauthenticated(ctx context.Context, c *client.Client) (string, error) {
	e, err := failure(ctx, c, echo("hi", nil))
	if err != nil {
		return "", err
	}
	if e.Code != codes.Unauthenticated || e.Reason != "CREDENTIALS_MISSING" {
		return "", e
	}
	return codeName(e.Code) + " " + e.Reason, nil
}

// toolsOptions scripts mock/echo for the server-tools scenario: turn 1 says
// a few words and calls both tools; turn 2 answers from their results, its
// first attempt (2) dropping after one delta.
var toolsOptions = map[string]any{
	"script": []any{map[string]any{"text": "Let me ask the tools. ", "tool_calls": []any{
		map[string]any{"name": "everything__echo", "arguments": map[string]any{"message": "hello"}},
		map[string]any{"name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 2}},
	}}},
	"faults": []any{map[string]any{}, map[string]any{"drop_after": 1}, map[string]any{}},
}

func serverTools(ctx context.Context, c *client.Client) (string, error) {
	list, err := c.ListTools(ctx, &llmrelayv1.ListToolsRequest{})
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(list.GetTools(), func(t *llmrelayv1.ServerTool) bool { return t.GetName() == "everything/echo" && t.GetAvailable() }) {
		return "", fmt.Errorf("ListTools does not list everything/echo, available: %v", list.GetTools())
	}
	req := echo("use the tools", toolsOptions)
	req.ServerTools = []string{"everything/echo", "everything/trigger-long-running-operation"}
	req.Retry = &llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(50 * time.Millisecond)}
	s, err := c.Generate(ctx, req)
	if err != nil {
		return "", err
	}
	// screen is what a terminal shows: each turn on a line of its own, a
	// discarded text taken back.
	var screen strings.Builder
	var discards, results []string
	progress := map[string]int{} // by tool call id
	before := -1                 // the long operation's progress events before its result
	final, err := client.Collect(s, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) { screen.WriteString(d.GetText()) },
		OnTurn:  func(uint32) { screen.WriteString("\n") },
		OnWillRetry: func(w *llmrelayv1.WillRetry, discarded string) {
			if w.GetDiscardPartial() {
				discards = append(discards, discarded)
				shown := screen.String()
				screen.Reset()
				screen.WriteString(strings.TrimSuffix(shown, discarded))
			}
		},
		OnToolProgress: func(p *llmrelayv1.ToolProgress) { progress[p.GetToolCallId()]++ },
		OnToolResult: func(r *llmrelayv1.ToolResult) {
			results = append(results, r.GetName()+": "+strings.SplitN(r.GetContent(), ".", 2)[0])
			if r.GetName() == "everything/trigger-long-running-operation" {
				before = progress[r.GetToolCallId()]
			}
		},
	})
	if err != nil {
		return "", err
	}
	answer := final.GetMessage().GetContent()
	slices.Sort(results)
	switch {
	case !slices.Equal(results, []string{"everything/echo: Echo: hello", "everything/trigger-long-running-operation: Long running operation completed"}):
		return "", fmt.Errorf("tool results %q", results)
	case before < 2:
		return "", fmt.Errorf("%d tool_progress events before the long operation's result, want 2 or more", before)
	case !slices.Equal(discards, []string{"Echo: "}):
		return "", fmt.Errorf("discarded %q, want turn 2's first delta only", discards)
	case screen.String() != "Let me ask the tools. \n"+answer || !strings.HasPrefix(answer, "Echo: hello\n"):
		return "", fmt.Errorf("screen %q, final %q", screen.String(), answer)
	case final.GetTurns() != 2 || len(final.GetTranscript()) != 4:
		return "", fmt.Errorf("final: %d turns, %d transcript messages; want 2 and 4", final.GetTurns(), len(final.GetTranscript()))
	}
	return fmt.Sprintf("listed everything/echo; 2 tool results, %d progress events before the long one's; turn 2's retry discarded %q only; the text equals the final; %d turns, %d messages in the transcript",
		before, discards[0], final.GetTurns(), len(final.GetTranscript())), nil
}

// tripSchema is the structured scenario's schema: the mock replies with its
// deterministic instance (docs/structured-output.md), tripWant, unless a
// fault's output replaces it.
var (
	tripSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"city":   map[string]any{"type": "string", "enum": []any{"Lisbon", "Porto"}},
			"days":   map[string]any{"type": "integer", "minimum": 3, "maximum": 7},
			"sights": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"Belem", "Alfama", "Sintra"}}, "minItems": 2, "uniqueItems": true},
		},
		"required":             []any{"city", "days", "sights"},
		"additionalProperties": false,
	}
	tripWant = map[string]any{"city": "Lisbon", "days": 3.0, "sights": []any{"Belem", "Alfama"}}
	// tripInvalid is the first attempt's reply: days is not an integer and
	// sights is missing, so the server re-asks.
	tripInvalid = `{"city": "Lisbon", "days": "many"}`
)

func structured(ctx context.Context, c *client.Client) (string, error) {
	jsonSchema, err := structpb.NewStruct(tripSchema)
	if err != nil {
		return "", err
	}
	req := echo("plan a short trip", map[string]any{"faults": []any{map[string]any{"output": tripInvalid}}})
	req.ResponseFormat = &llmrelayv1.ResponseFormat{Name: "trip", JsonSchema: jsonSchema, StreamPartialObjects: true}
	s, err := c.Generate(ctx, req)
	if err != nil {
		return "", err
	}
	// partials are the current attempt's partial objects, as plain JSON; a
	// will_retry with discard_partial voids them (the library keeps no
	// object of its own: the caller drops what it showed).
	var partials []any
	var discarded []any
	var retries []*llmrelayv1.WillRetry
	final, err := client.Collect(s, &client.Hooks{
		OnPartialObject: func(v *structpb.Value) { partials = append(partials, v.AsInterface()) },
		OnWillRetry: func(w *llmrelayv1.WillRetry, _ string) {
			retries = append(retries, w)
			if w.GetDiscardPartial() {
				discarded = append(discarded, partials...)
				partials = nil
			}
		},
	})
	if err != nil {
		return "", err
	}
	object := final.GetObject().AsInterface()
	switch {
	case len(retries) != 1 || !retries[0].GetDiscardPartial() || retries[0].GetReason() != llmrelayv1.RetryReason_RETRY_REASON_INVALID_OUTPUT:
		return "", fmt.Errorf("will_retry events %v, want one, INVALID_OUTPUT with discard_partial", retries)
	case len(discarded) == 0 || within(discarded[len(discarded)-1], object):
		return "", fmt.Errorf("the first attempt's partial objects %v: want the invalid one, which the final contradicts", discarded)
	case !reflect.DeepEqual(object, tripWant):
		return "", fmt.Errorf("final object %v, want %v", object, tripWant)
	case final.GetAttempts() != 2 || final.GetValidationRetries() != 1:
		return "", fmt.Errorf("final: %d attempts, %d validation retries; want 2 and 1", final.GetAttempts(), final.GetValidationRetries())
	}
	if err := growing(partials, object); err != nil {
		return "", err
	}
	return fmt.Sprintf("one re-ask discarded %d partial object(s) ending in %s; then %d grew to the final object, which equals %s",
		len(discarded), jsonText(discarded[len(discarded)-1]), len(partials), jsonText(object)), nil
}

// jsonText is v as compact JSON, as the other languages print it.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// growing checks that partials, an attempt's partial objects, grew toward
// the final object: at least two different ones, each within the next and
// the last within the final.
func growing(partials []any, final any) error {
	if len(partials) < 2 || reflect.DeepEqual(partials[0], partials[len(partials)-1]) {
		return fmt.Errorf("partial objects %v: want at least two different ones", partials)
	}
	for i, p := range partials {
		next := final
		if i+1 < len(partials) {
			next = partials[i+1]
		}
		if !within(p, next) {
			return fmt.Errorf("partial object %v is not within the next, %v", p, next)
		}
	}
	return nil
}

// within reports whether part is what whole looked like while it was being
// written: its members within whole's, its items a prefix of whole's, its
// strings a prefix, anything else equal.
func within(part, whole any) bool {
	switch p := part.(type) {
	case map[string]any:
		w, ok := whole.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range p {
			if wv, ok := w[k]; !ok || !within(v, wv) {
				return false
			}
		}
		return true
	case []any:
		w, ok := whole.([]any)
		if !ok || len(p) > len(w) {
			return false
		}
		for i := range p {
			if !within(p[i], w[i]) {
				return false
			}
		}
		return true
	case string:
		w, ok := whole.(string)
		return ok && strings.HasPrefix(w, p)
	}
	return reflect.DeepEqual(part, whole)
}

func embed(ctx context.Context, c *client.Client) (string, error) {
	inputs := []string{"the cat sat", "a dog"}
	faults, err := structpb.NewStruct(map[string]any{"faults": []any{map[string]any{"status": 503}}})
	if err != nil {
		return "", err
	}
	resp, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: inputs, Dimensions: new(uint32(4)), ProviderOptions: faults})
	if err != nil {
		return "", err
	}
	if len(resp.GetEmbeddings()) != len(inputs) {
		return "", fmt.Errorf("%d embeddings, want %d", len(resp.GetEmbeddings()), len(inputs))
	}
	for i, e := range resp.GetEmbeddings() {
		var norm float64
		for _, x := range e.GetValues() {
			norm += float64(x) * float64(x)
		}
		if len(e.GetValues()) != 4 || math.Abs(norm-1) > 1e-5 {
			return "", fmt.Errorf("embedding %d: %d values of norm %v, want 4 of norm 1", i, len(e.GetValues()), norm)
		}
	}
	if resp.GetProvider() != "mock" || resp.GetModel() != "echo" || resp.GetAttempts() != 2 {
		return "", fmt.Errorf("provider %s, model %s, attempts %d", resp.GetProvider(), resp.GetModel(), resp.GetAttempts())
	}
	if resp.GetUsage().GetInputTokens() != 5 {
		return "", fmt.Errorf("input tokens %d", resp.GetUsage().GetInputTokens())
	}
	// The vector of a text does not depend on the others: the order held.
	alone, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: inputs[1:], Dimensions: new(uint32(4))})
	if err != nil {
		return "", err
	}
	if !slices.Equal(alone.GetEmbeddings()[0].GetValues(), resp.GetEmbeddings()[1].GetValues()) {
		return "", errors.New("embeddings[1] is not the embedding of inputs[1]")
	}
	_, err = c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"the cat sat", ""}})
	var e *client.Error
	if !errors.As(err, &e) {
		return "", fmt.Errorf("an empty input: want a *client.Error, got %v", err)
	}
	var fields []string
	for _, v := range e.FieldViolations {
		fields = append(fields, v.GetField())
	}
	if e.Code != codes.InvalidArgument || e.Reason != "INVALID_REQUEST" || !slices.Contains(fields, "inputs[1]") {
		return "", fmt.Errorf("an empty input: %v; violations %v", e, fields)
	}
	return fmt.Sprintf("%d vectors of 4 in order, %d input tokens, %d attempts; an empty input: %s %s %s",
		len(resp.GetEmbeddings()), resp.GetUsage().GetInputTokens(), resp.GetAttempts(), codeName(e.Code), e.Reason, strings.Join(fields, ", ")), nil
}

// models checks the model listing: mock's models, and ollama, configured
// without a models list, among the providers that accept any model name,
// with the key's pattern that reaches it.
func models(ctx context.Context, c *client.Client) (string, error) {
	resp, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, m := range resp.GetModels() {
		ids = append(ids, m.GetId())
	}
	if !slices.Contains(ids, "mock/echo") || slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, "ollama/") }) {
		return "", fmt.Errorf("models %v: want mock/echo, and none of ollama's", ids)
	}
	var anyModel []string
	for _, p := range resp.GetAnyModelProviders() {
		anyModel = append(anyModel, fmt.Sprintf("%s (%s) %v", p.GetProvider(), p.GetProviderKind(), p.GetKeyPatterns()))
	}
	if !slices.Equal(anyModel, []string{"ollama (openai) [ollama/llama3*]"}) {
		return "", fmt.Errorf("any_model_providers %q, want ollama (openai) with the key's pattern ollama/llama3*", anyModel)
	}
	return fmt.Sprintf("%d models, mock/echo among them; any model name: %s", len(ids), anyModel[0]), nil
}

// codeName is the gRPC name of a code, as the other languages print it.
func codeName(c codes.Code) string {
	return map[codes.Code]string{codes.InvalidArgument: "INVALID_ARGUMENT", codes.DeadlineExceeded: "DEADLINE_EXCEEDED",
		codes.Unavailable: "UNAVAILABLE", codes.Unauthenticated: "UNAUTHENTICATED"}[c]
}
