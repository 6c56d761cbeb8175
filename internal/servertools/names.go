package servertools

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxModelName is the longest tool name providers accept (OpenAI's
// function names: ^[A-Za-z0-9_-]{1,64}$; the contract's Tool.name too).
const maxModelName = 64

// modelSeparator joins a server's name and its tool's in the name the
// model sees; server names never contain it.
const modelSeparator = "__"

// baseModelName returns the name the model sees for a server's tool:
// "<server>__<tool>", every character a provider does not accept in a
// function name replaced by "_", shortened with a hash of the full name
// past 64 characters.
func baseModelName(server, tool string) string {
	var b strings.Builder
	b.WriteString(server)
	b.WriteString(modelSeparator)
	for _, r := range tool {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() <= maxModelName {
		return b.String()
	}
	return hashedModelName(b.String(), server+"/"+tool)
}

// hashedModelName shortens name to 64 characters, ending with a hash of
// full, so that two tools whose names differ only past the cut, or in
// characters replaced by "_", keep different names.
func hashedModelName(name, full string) string {
	sum := sha256.Sum256([]byte(full))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name) > maxModelName-len(suffix) {
		name = name[:maxModelName-len(suffix)]
	}
	return name + suffix
}

// hasPattern reports whether a tool list entry is a pattern rather than a
// tool's name.
func hasPattern(s string) bool { return strings.ContainsAny(s, "*?") }

// splitName splits "<server>/<tool>" at its first "/".
func splitName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, "/")
	return server, tool, ok && server != "" && tool != ""
}
