package servertools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolResult turns a tool's result from server into what the model is
// sent, bounded to limit bytes. The server's credentials are redacted
// before the cut, which could leave part of one behind.
func (h *Host) toolResult(server string, r *mcp.CallToolResult, limit int) Result {
	res := Result{Content: h.redact(server, resultText(r)), IsError: r.IsError, Outcome: OutcomeOK}
	if r.IsError {
		res.Outcome = OutcomeToolError
	}
	res.Content, res.Truncated = bound(res.Content, limit)
	return res
}

// resultText is a tool result's content as one text: its text parts, in
// order, one per line; its structured content as JSON when it has no text
// part (a tool with structured output usually repeats it as text); every
// other part described in a line of its own, so that the model knows it
// was there: an image, audio, a link to a resource, an embedded resource
// (with its text, when it is text).
func resultText(r *mcp.CallToolResult) string {
	var parts []string
	hasText := false
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
			hasText = true
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.ResourceLink:
			s := "[resource link: " + c.URI
			if c.Name != "" {
				s += " (" + c.Name + ")"
			}
			if c.MIMEType != "" {
				s += ", " + c.MIMEType
			}
			if c.Description != "" {
				s += ": " + c.Description
			}
			parts = append(parts, s+"]")
		case *mcp.EmbeddedResource:
			rc := c.Resource
			if rc == nil {
				parts = append(parts, "[embedded resource: empty]")
				continue
			}
			if rc.Text != "" {
				parts = append(parts, fmt.Sprintf("[embedded resource: %s, %s]\n%s", rc.URI, orUnknown(rc.MIMEType), rc.Text))
				hasText = true
				continue
			}
			parts = append(parts, fmt.Sprintf("[embedded resource: %s, %s, %d bytes, not shown]", rc.URI, orUnknown(rc.MIMEType), len(rc.Blob)))
		default:
			parts = append(parts, fmt.Sprintf("[content of type %T, not shown]", c))
		}
	}
	if !hasText && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			parts = append([]string{string(b)}, parts...)
		}
	}
	return strings.Join(parts, "\n")
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// bound cuts s to at most limit bytes, as Bound does; limit 0 or less
// means no bound. truncated says it was cut.
func bound(s string, limit int) (string, bool) {
	if limit <= 0 || len(s) <= limit {
		return s, false
	}
	return Bound(s, limit), true
}

// Bound returns a tool result s cut to at most limit bytes, on a character
// boundary, ending with a note to the model saying it was cut when the
// note fits; s itself when it fits.
func Bound(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	limit = max(limit, 0)
	note := fmt.Sprintf("\n[llmrelay: the tool's result was cut here, at %d of its %d bytes]", limit, len(s))
	if len(note) > limit {
		note = ""
	}
	cut := limit - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}
