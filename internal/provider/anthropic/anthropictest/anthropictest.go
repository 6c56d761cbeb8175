// Package anthropictest reads recorded Anthropic Messages streams for
// tests, independently of the adapter: what a client that reads a whole
// reply holds, and what Anthropic asks to get back.
package anthropictest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Blocks rebuilds the content blocks of the reply a Messages stream
// carries, as the API documents them: each content_block_start's block
// with its deltas applied (text, thinking and signature appended; a tool
// call's streamed input, parsed, replacing the start's). Values are
// decoded JSON (map[string]any, []any, string, float64, ...), ready to
// compare with a request's blocks.
func Blocks(stream []byte) ([]map[string]any, error) {
	var blocks []map[string]any
	inputs := map[int]*strings.Builder{}
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			ContentBlock json.RawMessage `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, fmt.Errorf("%.80s: %w", data, err)
		}
		switch ev.Type {
		case "content_block_start":
			var block map[string]any
			if err := json.Unmarshal(ev.ContentBlock, &block); err != nil {
				return nil, err
			}
			blocks = append(blocks, block)
		case "content_block_delta":
			if ev.Index >= len(blocks) {
				return nil, fmt.Errorf("a delta of block %d before its start", ev.Index)
			}
			block := blocks[ev.Index]
			switch ev.Delta.Type {
			case "text_delta":
				block["text"] = block["text"].(string) + ev.Delta.Text
			case "thinking_delta":
				block["thinking"] = block["thinking"].(string) + ev.Delta.Thinking
			case "signature_delta":
				block["signature"] = block["signature"].(string) + ev.Delta.Signature
			case "input_json_delta":
				if inputs[ev.Index] == nil {
					inputs[ev.Index] = &strings.Builder{}
				}
				inputs[ev.Index].WriteString(ev.Delta.PartialJSON)
			}
		}
	}
	for i, in := range inputs {
		if in.Len() > 0 {
			var v any
			if err := json.Unmarshal([]byte(in.String()), &v); err != nil {
				return nil, fmt.Errorf("block %d's streamed input: %w", i, err)
			}
			blocks[i]["input"] = v
		}
	}
	return blocks, sc.Err()
}

// Turns returns the content blocks of each turn of a Messages API request
// body, decoded.
func Turns(body []byte) ([][]map[string]any, error) {
	var req struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	turns := make([][]map[string]any, len(req.Messages))
	for i, m := range req.Messages {
		turns[i] = m.Content
	}
	return turns, nil
}
