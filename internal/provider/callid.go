package provider

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// NewCallID returns a tool-call id for a call its provider sent without
// one (some OpenAI-compatible servers, Gemini): "call_" and 24 random hex
// digits. It is unique across the turns of a conversation, not only
// within a reply: Anthropic refuses a conversation whose tool_use ids
// repeat, and a generated id reaches it when a route falls back there.
// It is made of the characters every provider accepts in an id. An
// adapter calls it once per call, as the call's first event goes out, so
// the call's delta and the Final carry the same id. Safe for concurrent
// use.
func NewCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return "call_" + hex.EncodeToString(b[:])
}

// FitCallID returns a tool call's id as a provider that takes only ids of
// the bytes ok allows (nil: any byte), at most max bytes long (0: any
// length), takes it. An id that fits is returned as it is. Any other has
// each byte ok refuses replaced by "_" (a run of them by one), is cut at
// a character's start to leave room when max needs it, and gets "_" and 8
// hex digits of the whole id's SHA-256 appended, so that two ids that
// differ only in what was replaced or cut stay two. The same id always
// maps to the same one, so an adapter maps a call's id and the id of the
// result that answers it alike; the ids of a reply are the provider's own,
// so the client never sees a mapped one. Adapters use it for ids another
// provider (or the client) made, which reach them when a route falls back
// (docs/providers.md).
func FitCallID(id string, max int, ok func(byte) bool) string {
	fits := max == 0 || len(id) <= max
	for i := 0; fits && ok != nil && i < len(id); i++ {
		fits = ok(id[i])
	}
	if fits {
		return id
	}
	b := make([]byte, 0, len(id)+9)
	for i := 0; i < len(id); i++ {
		switch {
		case ok == nil || ok(id[i]):
			b = append(b, id[i])
		case len(b) == 0 || b[len(b)-1] != '_':
			b = append(b, '_')
		}
	}
	if keep := max - 9; max > 0 && len(b) > keep {
		for keep > 0 && !utf8.RuneStart(b[keep]) {
			keep--
		}
		b = b[:keep]
	}
	sum := sha256.Sum256([]byte(id))
	return string(b) + "_" + hex.EncodeToString(sum[:4])
}
