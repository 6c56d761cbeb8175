package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// isProviderTool reports whether a content block type is one of a tool
// Anthropic runs itself (server tools, the MCP connector): a call
// ("server_tool_use", "mcp_tool_use") or a result (every "*_tool_result":
// web_search_, web_fetch_, code_execution_, bash_code_execution_,
// text_editor_code_execution_, tool_search_, mcp_). The adapter carries
// these blocks opaquely (provider.ProviderTool) and sends them back
// unchanged.
func isProviderTool(typ string) bool {
	return typ == "server_tool_use" || typ == "mcp_tool_use" || isToolResult(typ)
}

// isToolResult reports whether a provider tool block type is a result,
// whose id field is tool_use_id (a call's is id).
func isToolResult(typ string) bool { return strings.HasSuffix(typ, "_tool_result") }

// errNotAnObject is the error for a content block that is not a JSON
// object.
var errNotAnObject = errors.New("a content block that is not a JSON object")

// providerTool reads a provider tool block, the raw content_block of its
// content_block_start, keeping every value's bytes as they came: type,
// id (or tool_use_id), name, input and content (the result) go to their
// fields, every other field (caller, server_name, is_error, ...) to Extra,
// in the order they came.
func providerTool(raw []byte) (*provider.ProviderTool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errNotAnObject
	}
	t := &provider.ProviderTool{Format: provider.FormatAnthropic}
	var extra bytes.Buffer
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var to *string
		switch key {
		case "type":
			if err := json.Unmarshal(v, &t.Kind); err != nil {
				return nil, err
			}
			continue
		case "id", "tool_use_id":
			if t.ID == "" {
				if err := json.Unmarshal(v, &t.ID); err != nil {
					return nil, err
				}
				continue
			}
		case "name":
			if err := json.Unmarshal(v, &t.Name); err != nil {
				return nil, err
			}
			continue
		case "input":
			to = &t.Input
		case "content":
			to = &t.Result
		}
		if to != nil {
			*to = string(v)
			continue
		}
		if extra.Len() > 0 {
			extra.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		extra.Write(k)
		extra.WriteByte(':')
		extra.Write(v)
	}
	if extra.Len() > 0 {
		t.Extra = "{" + extra.String() + "}"
	}
	return t, nil
}

// providerToolBlock returns the content block that sends t back: its
// type, its id (tool_use_id for a result), name, input or content, then
// its other fields, every value the bytes that came.
func providerToolBlock(t *provider.ProviderTool) json.RawMessage {
	var b bytes.Buffer
	field := func(key string, raw []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(key)
		b.WriteByte(':')
		b.Write(raw)
	}
	str := func(s string) []byte {
		q, _ := json.Marshal(s)
		return q
	}
	b.WriteByte('{')
	field(`"type"`, str(t.Kind))
	if isToolResult(t.Kind) {
		field(`"tool_use_id"`, str(t.ID))
	} else {
		field(`"id"`, str(t.ID))
	}
	if t.Name != "" {
		field(`"name"`, str(t.Name))
	}
	if t.Input != "" {
		field(`"input"`, []byte(t.Input))
	}
	if t.Result != "" {
		field(`"content"`, []byte(t.Result))
	}
	if extra := strings.TrimSpace(t.Extra); len(extra) > 2 && extra[0] == '{' && extra[len(extra)-1] == '}' {
		if inner := strings.TrimSpace(extra[1 : len(extra)-1]); inner != "" {
			b.WriteByte(',')
			b.WriteString(inner)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
