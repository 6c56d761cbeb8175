package schema

import (
	"net/url"
	"strconv"
	"strings"
)

// pointerEscaper escapes a JSON pointer reference token (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer appends tokens to the JSON pointer p.
func pointer(p string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(p)
	for _, t := range tokens {
		b.WriteByte('/')
		pointerEscaper.WriteString(&b, t)
	}
	return b.String()
}

// pointerIndex appends an array index to the JSON pointer p.
func pointerIndex(p string, i int) string { return p + "/" + strconv.Itoa(i) }

// fragmentPointer returns the JSON pointer in the fragment of a schema URL
// such as "mem:///schema.json#/properties/a", unescaping it.
func fragmentPointer(u string) string {
	_, frag, ok := strings.Cut(u, "#")
	if !ok {
		return ""
	}
	if s, err := url.PathUnescape(frag); err == nil {
		frag = s
	}
	return frag
}

// quoteLocation renders a JSON pointer for the re-ask message as 'p', with
// quotes, backslashes and control characters escaped so that a property name
// cannot break the message's lines.
func quoteLocation(p string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range p {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
