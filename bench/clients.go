package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// result is one stream, seen from the client.
type result struct {
	total      time.Duration // request to the end of the stream
	firstDelta time.Duration // request to the first piece of text
	events     int           // events the relay sent (0 for direct)
	err        error
}

// streamer runs one whole stream and checks its text.
type streamer func(ctx context.Context) result

// directBody is the request an application would send the provider itself:
// what the openai adapter sends for the same call. httpDoorBody is the same
// request to llmrelay's OpenAI-compatible door, which names the model as
// llmrelay does.
var (
	directBody   = []byte(`{"model":"fake","messages":[{"role":"user","content":"Say twenty words."}],"stream":true,"stream_options":{"include_usage":true}}`)
	httpDoorBody = []byte(`{"model":"openai/fake","messages":[{"role":"user","content":"Say twenty words."}],"stream":true,"stream_options":{"include_usage":true}}`)
)

// directChunk is the part of a chat.completion.chunk a client reads.
type directChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

// direct streams a reply from the upstream the way a lean application
// would: net/http, a bufio line reader and encoding/json into a small
// struct, keep-alive connections. The same client streams through
// llmrelay's OpenAI-compatible door (body httpDoorBody, url its /v1).
func direct(client *http.Client, url string, body []byte, want string) streamer {
	return func(ctx context.Context) result {
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			return result{err: err}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			return result{err: err}
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return result{err: fmt.Errorf("HTTP %d", resp.StatusCode)}
		}
		var r result
		var text bytes.Buffer
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return result{err: fmt.Errorf("the stream ended without [DONE]: %w", err)}
			}
			data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
			if !ok {
				continue
			}
			if string(data) == "[DONE]" {
				break
			}
			var c directChunk
			if err := json.Unmarshal(data, &c); err != nil {
				return result{err: err}
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != "" && text.Len() == 0 {
					r.firstDelta = time.Since(start)
				}
				text.WriteString(ch.Delta.Content)
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body) // lets the connection be reused
		r.total = time.Since(start)
		if text.String() != want {
			r.err = fmt.Errorf("direct: got %q, want %q", text.String(), want)
		}
		return r
	}
}

// relayed streams the same reply through llmrelay with the generated Go
// client.
func relayed(client llmrelayv1.LLMServiceClient, model, want string) streamer {
	return relayedRequest(client, &llmrelayv1.GenerateRequest{
		Model:    model,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "Say twenty words."}},
	}, want)
}

// relayedRequest streams req's reply through llmrelay and checks it.
func relayedRequest(client llmrelayv1.LLMServiceClient, req *llmrelayv1.GenerateRequest, want string) streamer {
	return func(ctx context.Context) result {
		start := time.Now()
		stream, err := client.Generate(ctx, req)
		if err != nil {
			return result{err: err}
		}
		var r result
		var final *llmrelayv1.Final
		for {
			ev, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return result{err: err}
			}
			r.events++
			switch {
			case ev.GetDelta().GetText() != "" && r.firstDelta == 0:
				r.firstDelta = time.Since(start)
			case ev.GetFinal() != nil:
				final = ev.GetFinal()
			}
		}
		r.total = time.Since(start)
		if got := final.GetMessage().GetContent(); got != want {
			r.err = fmt.Errorf("relayed: final %q, want %q", got, want)
		}
		return r
	}
}
