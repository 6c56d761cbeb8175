package servertools

import (
	"encoding/json"
	"fmt"
	"mime"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Part is a piece of a result with images, in order: text, or an image.
type Part struct {
	// Text is a piece of the result's Content, when Image is nil.
	Text  string
	Image *Image
}

// Image is an image of a tool's result, sent to the model as an image.
type Image struct {
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string
	// Data is the image's bytes (decoded), 1 byte to provider.MaxImageBytes.
	Data []byte
}

// toolResult turns a tool's result from server into what the model is
// sent, its text bounded to limit bytes, and what the user alone is
// (UserContent), bounded alike. The server's credentials are redacted
// before the cut, which could leave part of one behind.
func (h *Host) toolResult(server string, r *mcp.CallToolResult, limit int) Result {
	res := resultOf(r)
	h.redactResult(server, &res)
	res.Outcome = OutcomeOK
	if r.IsError {
		res.IsError, res.Outcome = true, OutcomeToolError
	}
	res.Truncated = res.cut(limit, false)
	if limit > 0 && len(res.UserContent) > limit {
		res.UserContent, res.Truncated = Bound(res.UserContent, limit), true
	}
	return res
}

// resultOf is a tool result's content as text and images: its text parts,
// in order, one per line; its images that the model may be sent
// (sendableImage) as images, in their places; every other part described
// in a line of its own, so that the model knows it was there: an image
// that cannot be sent, audio, a link to a resource, an embedded resource
// (with its text, when it is text: resourceText). Its structured content
// is JSON in a line of its own: first when it has no text, last (after a
// line saying what it is) when its text is not that JSON already (a tool
// with structured output should repeat it as text, and then the model
// reads it once). Parts is nil without images.
//
// A part whose annotations' audience leaves the assistant out (["user"])
// is not the model's: it goes, in its line, to UserContent, and the model
// is told that there was such a part (forModel).
func resultOf(r *mcp.CallToolResult) Result {
	var lines []string // the text, one entry a line
	var images []Part  // the images, each after the lines before it
	var at []int       // images[i] comes after lines[:at[i]]
	var texts []string // the model's text parts, to compare with the structured content
	var user []string  // the lines of the parts for the user alone
	hasText := false
	for _, c := range r.Content {
		if !forModel(c) {
			line, _ := describe(c)
			user = append(user, line)
			continue
		}
		if img, ok := c.(*mcp.ImageContent); ok {
			if img, ok := sendableImage(img); ok {
				images = append(images, Part{Image: img})
				at = append(at, len(lines))
				continue
			}
		}
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
		line, text := describe(c)
		lines = append(lines, line)
		hasText = hasText || text
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			switch {
			case !hasText:
				lines = append([]string{string(b)}, lines...)
				for i := range at {
					at[i]++
				}
			case !repeats(texts, b):
				lines = append(lines, "[structured content]\n"+string(b))
			}
		}
	}
	if n := len(user); n > 0 {
		parts := "1 content part"
		if n > 1 {
			parts = fmt.Sprintf("%d content parts", n)
		}
		if len(lines) == 0 && len(images) == 0 {
			outcome := "succeeded"
			if r.IsError {
				outcome = "failed"
			}
			lines = append(lines, fmt.Sprintf("[llmrelay: the tool %s; its result, %s, is meant for the user only: it went to the user, not to the model]", outcome, parts))
		} else {
			lines = append(lines, fmt.Sprintf("[llmrelay: %s more of the result, meant for the user only, went to the user, not to the model]", parts))
		}
	}
	res := Result{UserContent: strings.Join(user, "\n")}
	if len(images) == 0 {
		res.Content = strings.Join(lines, "\n")
		return res
	}
	// The text between two images is a text part; each line but the first
	// starts with the newline that separates it from the line before, so
	// that the text parts, concatenated, are the lines joined as a result
	// without images joins them.
	var text strings.Builder
	next := 0
	flush := func() {
		if text.Len() > 0 {
			res.Parts = append(res.Parts, Part{Text: text.String()})
			text.Reset()
		}
	}
	for i, img := range images {
		for ; next < at[i]; next++ {
			if next > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(lines[next])
		}
		flush()
		res.Parts = append(res.Parts, img)
	}
	for ; next < len(lines); next++ {
		if next > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(lines[next])
	}
	flush()
	res.Content = res.text()
	return res
}

// describe returns a content part as a line of text, and whether that
// line holds the part's text (a text part, an embedded resource's text):
// any other part is described (kind, MIME type, name or URI, size), an
// image too, whether or not it is sent as one.
func describe(c mcp.Content) (string, bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text, true
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data)), false
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data)), false
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
		return s + "]", false
	case *mcp.EmbeddedResource:
		rc := c.Resource
		if rc == nil {
			return "[embedded resource: empty]", false
		}
		if text, ok := resourceText(rc); ok {
			return fmt.Sprintf("[embedded resource: %s, %s]\n%s", rc.URI, orUnknown(rc.MIMEType), text), true
		}
		return fmt.Sprintf("[embedded resource: %s, %s, %d bytes, not shown]", rc.URI, orUnknown(rc.MIMEType), len(rc.Blob)), false
	}
	return fmt.Sprintf("[content of type %T, not shown]", c), false
}

// forModel reports whether a content part is for the model: MCP's
// annotations say who a part is meant for (audience: "user",
// "assistant"), and a part whose audience is given without the
// assistant is the user's alone. A part without an audience is for
// both.
func forModel(c mcp.Content) bool {
	var a *mcp.Annotations
	switch c := c.(type) {
	case *mcp.TextContent:
		a = c.Annotations
	case *mcp.ImageContent:
		a = c.Annotations
	case *mcp.AudioContent:
		a = c.Annotations
	case *mcp.ResourceLink:
		a = c.Annotations
	case *mcp.EmbeddedResource:
		a = c.Annotations
	}
	if a == nil || len(a.Audience) == 0 {
		return true
	}
	return slices.ContainsFunc(a.Audience, func(r mcp.Role) bool { return strings.EqualFold(string(r), "assistant") })
}

// repeats reports whether the text parts texts already say structured,
// the structured content's JSON: one of them, or all of them together,
// is the same JSON value (whatever its spacing and its keys' order).
func repeats(texts []string, structured []byte) bool {
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return false
	}
	same := func(s string) bool {
		s = strings.TrimSpace(s)
		if s == "" || s[0] != structured[0] {
			return false // not this JSON, without decoding it
		}
		var v any
		return json.Unmarshal([]byte(s), &v) == nil && reflect.DeepEqual(v, want)
	}
	if slices.ContainsFunc(texts, same) {
		return true
	}
	return len(texts) > 1 && same(strings.Join(texts, ""))
}

// resourceText returns an embedded resource's text: its text, or its
// blob when the blob is text, by its MIME type (text/*) and its bytes
// (UTF-8), as servers send a text file's bytes.
func resourceText(rc *mcp.ResourceContents) (string, bool) {
	if rc.Text != "" {
		return rc.Text, true
	}
	mt, _, err := mime.ParseMediaType(rc.MIMEType)
	if err != nil || !strings.HasPrefix(mt, "text/") || len(rc.Blob) == 0 || !utf8.Valid(rc.Blob) {
		return "", false
	}
	return string(rc.Blob), true
}

// sendableImage returns c as an image the model may be sent: one of a
// media type a request's image may have (PNG, JPEG, GIF, WebP), whose
// bytes are of that type (a provider refuses an image whose bytes belie
// its type, failing the whole call), of 1 byte to provider.MaxImageBytes.
func sendableImage(c *mcp.ImageContent) (*Image, bool) {
	mt := strings.ToLower(strings.TrimSpace(c.MIMEType))
	if !provider.IsImageMediaType(mt) || len(c.Data) == 0 || len(c.Data) > provider.MaxImageBytes || provider.ImageTypeOf(c.Data) != mt {
		return nil, false
	}
	return &Image{MediaType: mt, Data: c.Data}, true
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// text is the result's text parts, concatenated.
func (r *Result) text() string {
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Image == nil {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Size is how many bytes the result takes in a Generate call's final
// transcript: its Content and its images' bytes.
func (r *Result) Size() int {
	n := len(r.Content)
	for _, p := range r.Parts {
		if p.Image != nil {
			n += len(p.Image.Data)
		}
	}
	return n
}

// Cut cuts the result to at most limit bytes of Size, as Bound cuts a
// text: where the limit falls, in its text or on an image that does not
// fit whole, with the note to the model when it fits; nothing after the
// cut is kept, images included. It reports whether it cut.
func (r *Result) Cut(limit int) bool { return r.cut(limit, true) }

// cut cuts the result to limit bytes, of Size when images is set (an
// image that does not fit ends the result before it), of its text alone
// otherwise (its images before the cut are kept whatever their size),
// and reports whether it cut. limit 0 or less means no bound, for the
// text alone.
func (r *Result) cut(limit int, images bool) bool {
	size := len(r.Content)
	if images {
		size = r.Size()
	} else if limit <= 0 {
		return false
	}
	limit = max(limit, 0)
	if size <= limit {
		return false
	}
	if r.Parts == nil {
		r.Content = Bound(r.Content, limit)
		return true
	}
	note := cutNote(limit, size)
	left := limit - len(note)
	var parts []Part
	for _, p := range r.Parts {
		if p.Image != nil {
			if images {
				if len(p.Image.Data) > left {
					break
				}
				left -= len(p.Image.Data)
			}
			parts = append(parts, p)
			continue
		}
		if len(p.Text) <= left {
			left -= len(p.Text)
			parts = append(parts, p)
			continue
		}
		if s := cutText(p.Text, left); s != "" {
			parts = append(parts, Part{Text: s})
		}
		break
	}
	if note != "" {
		if n := len(parts); n > 0 && parts[n-1].Image == nil {
			parts[n-1].Text += note
		} else {
			parts = append(parts, Part{Text: note})
		}
	}
	r.Parts = parts
	r.Content = r.text()
	if !slices.ContainsFunc(parts, func(p Part) bool { return p.Image != nil }) {
		r.Parts = nil // a result without images needs no parts
	}
	return true
}

// Bound returns a tool result s cut to at most limit bytes, on a character
// boundary, ending with a note to the model saying it was cut when the
// note fits; s itself when it fits.
func Bound(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	limit = max(limit, 0)
	note := cutNote(limit, len(s))
	return cutText(s, limit-len(note)) + note
}

// cutNote is the note to the model at the end of a result of size bytes
// cut at limit, "" when it does not fit in limit.
func cutNote(limit, size int) string {
	note := fmt.Sprintf("\n[llmrelay: the tool's result was cut here, at %d of its %d bytes]", limit, size)
	if len(note) > limit {
		return ""
	}
	return note
}

// cutText returns s cut to at most n bytes, on a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
