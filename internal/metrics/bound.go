package metrics

import "sync"

// labelBound bounds a label whose values someone other than the config
// chooses (a client's model names at a provider that lists none, the tool
// names an MCP server lists), per owner (the provider, the MCP server):
// an owner's first limit values keep their label, later ones are counted
// as other. What it has seen lasts as long as the server. Safe for
// concurrent use; the zero value is not: use newLabelBound.
type labelBound struct {
	limit int
	other string
	mu    sync.RWMutex
	seen  map[string]map[string]bool
}

func newLabelBound(limit int, other string) *labelBound {
	return &labelBound{limit: limit, other: other, seen: make(map[string]map[string]bool)}
}

// bound returns the label of value at owner: value while owner has fewer
// than the bound's values (or value is one of them), else the bound's
// other.
func (b *labelBound) bound(owner, value string) string {
	b.mu.RLock()
	seen, full := b.seen[owner][value], len(b.seen[owner]) >= b.limit
	b.mu.RUnlock()
	switch {
	case seen:
		return value
	case full:
		return b.other
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	values := b.seen[owner]
	if values == nil {
		values = make(map[string]bool)
		b.seen[owner] = values
	}
	if !values[value] && len(values) >= b.limit {
		return b.other
	}
	values[value] = true
	return value
}
