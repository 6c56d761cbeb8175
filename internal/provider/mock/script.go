package mock

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// A script makes the mock a tool-calling model: provider_options.script
// lists what the model does in each turn of a conversation, where a turn
// is one model reply after the last user message (the first reply is turn
// 1; each assistant message after the last user message is a turn
// already taken). An entry streams its text, if any, then calls its
// tools, if any (the reply then finishes with FinishToolCalls; an entry
// with text alone is the model's answer). Past the script's
// end the model answers from the tool results it was sent since its last
// turn (their contents, one per line, images shown as echo shows them): a
// tool-calling model that read the results. So [{"tool_calls": [{"name":
// "everything__echo", "arguments": {"message": "hi"}}]}] calls the echo tool in turn 1 and answers
// "Echo: hi" in turn 2, which is how llmrelay's server tools (and a
// client running its own tools) can be tried without a real provider.
//
// The calls' ids are "mock_<turn>_<index>". A call must name one of the
// request's tools (the names the model sees: a server tool's model_name,
// like everything__echo); faults (provider_options.faults) still apply
// per attempt, whatever the turn.

// maxScript bounds a script's entries.
const maxScript = 64

// scriptTurn is one entry of a script.
type scriptTurn struct {
	text  string
	calls []scriptCall
}

// scriptCall is a tool call of a script's turn.
type scriptCall struct {
	name      string
	arguments string // JSON text
}

// parseScript reads provider_options.script.
func parseScript(v any) ([]scriptTurn, error) {
	const path = "provider_options.script"
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > maxScript {
		return nil, fieldErr(path, fmt.Sprintf(`must be a list of 1 to %d turns such as {"tool_calls": [{"name": "everything__echo", "arguments": {"message": "hi"}}]}`, maxScript))
	}
	turns := make([]scriptTurn, len(list))
	for i, item := range list {
		at := fmt.Sprintf("%s[%d]", path, i)
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, fieldErr(at, "must be an object with text and tool_calls")
		}
		for k := range obj {
			if k != "text" && k != "tool_calls" {
				return nil, fieldErr(at+"."+k, "unknown key; known: text, tool_calls")
			}
		}
		if v, ok := obj["text"]; ok {
			s, isStr := v.(string)
			if !isStr {
				return nil, fieldErr(at+".text", "must be a string")
			}
			turns[i].text = s
		}
		raw, has := obj["tool_calls"]
		if !has {
			if _, hasText := obj["text"]; !hasText {
				return nil, fieldErr(at, "needs text, tool_calls or both")
			}
			continue
		}
		calls, ok := raw.([]any)
		if !ok || len(calls) == 0 || len(calls) > maxToolCalls {
			return nil, fieldErr(at+".tool_calls", fmt.Sprintf(`must be a list of 1 to %d calls such as {"name": "everything__echo", "arguments": {"message": "hi"}}`, maxToolCalls))
		}
		for j, c := range calls {
			cat := fmt.Sprintf("%s.tool_calls[%d]", at, j)
			obj, ok := c.(map[string]any)
			if !ok {
				return nil, fieldErr(cat, "must be an object with name and arguments")
			}
			for k := range obj {
				if k != "name" && k != "arguments" {
					return nil, fieldErr(cat+"."+k, "unknown key; known: arguments, name")
				}
			}
			name, _ := obj["name"].(string)
			if name == "" {
				return nil, fieldErr(cat+".name", "must be the name of one of the request's tools, as the model sees it (e.g. everything__echo)")
			}
			args := "{}"
			switch a := obj["arguments"].(type) {
			case nil:
			case map[string]any:
				b, err := json.Marshal(a)
				if err != nil {
					return nil, fieldErr(cat+".arguments", err.Error())
				}
				args = string(b)
			case string:
				args = a
			default:
				return nil, fieldErr(cat+".arguments", "must be an object, or a string holding JSON")
			}
			turns[i].calls = append(turns[i].calls, scriptCall{name: name, arguments: args})
		}
	}
	return turns, nil
}

// checkScript reports a scripted call of a tool the request does not
// offer.
func checkScript(script []scriptTurn, tools []provider.Tool) error {
	offered := make([]string, len(tools))
	for i, t := range tools {
		offered[i] = t.Name
	}
	for i, st := range script {
		for j, c := range st.calls {
			if !slices.Contains(offered, c.name) {
				list := "none"
				if len(offered) > 0 {
					list = strings.Join(offered, ", ")
				}
				return fieldErr(fmt.Sprintf("provider_options.script[%d].tool_calls[%d].name", i, j),
					fmt.Sprintf("%q is not one of the tools offered to the model (offered: %s)", c.name, list))
			}
		}
	}
	return nil
}

// scriptTurnOf returns which turn a request is: 1 + the assistant messages
// after the last user message.
func scriptTurnOf(msgs []provider.Message) int {
	turn := 1
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != provider.RoleUser; i-- {
		if msgs[i].Role == provider.RoleAssistant {
			turn++
		}
	}
	return turn
}

// toolResults returns the contents of the tool results after the last
// assistant message, one per line, their images in place as echo shows a
// user's (ImageText); ok is false when there are none.
func toolResults(msgs []provider.Message) (string, bool) {
	var out []string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == provider.RoleTool; i-- {
		out = append(out, withImages(&msgs[i]))
	}
	slices.Reverse(out)
	return strings.Join(out, "\n"), len(out) > 0
}

// scripted returns what the script says the reply of this turn is: its
// text and its tool calls; ok is false when the script has no say (no
// script, or past its end with no tool results to answer from).
func scripted(script []scriptTurn, msgs []provider.Message) (text string, calls []provider.ToolCall, ok bool) {
	if len(script) == 0 {
		return "", nil, false
	}
	turn := scriptTurnOf(msgs)
	if turn > len(script) {
		text, ok = toolResults(msgs)
		return text, nil, ok
	}
	st := script[turn-1]
	for i, c := range st.calls {
		calls = append(calls, provider.ToolCall{ID: fmt.Sprintf("mock_%d_%d", turn, i), Name: c.name, Arguments: c.arguments})
	}
	return st.text, calls, true
}
