package provider

import (
	"crypto/rand"
	"encoding/hex"
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
