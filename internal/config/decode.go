package config

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmrelay/llmrelay/internal/setting"
	"github.com/llmrelay/llmrelay/internal/spend"
)

// decodeFile reads one YAML document over c. Before anything is decoded,
// the document is checked against Config's shape, so that every unknown
// field (with the closest known one), every value of the wrong type and
// every duration that does not parse is reported at once, by path and
// line, in words rather than Go type names. Those settings are then left
// out and the rest is decoded, so that the sections' checks (Validate)
// find their problems in the same run. It returns the line of every
// setting the file sets and the problems of shape; err is a file that
// cannot be read or is not YAML.
func (c *Config) decodeFile(name string, r io.Reader) (lines map[string]int, shape Problems, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return map[string]int{}, nil, nil
	} else if err != nil {
		return nil, nil, Problems{syntaxError(name, data, err)}
	}
	if p := laterDocument(name, data, dec); p != nil {
		return nil, nil, Problems{p}
	}
	if len(doc.Content) == 0 {
		return map[string]int{}, nil, nil
	}
	w := walker{file: name, lines: map[string]int{}, aliased: map[*yaml.Node]bool{}, bad: map[*yaml.Node]bool{}}
	root := doc.Content[0]
	w.walk(root, reflect.TypeFor[Config](), "")
	if w.bad[root] {
		return nil, nil, w.problems
	}
	w.prune(root)
	if err := root.Decode(c); err != nil {
		// The walk checks everything the decoder does; this is for a
		// field type with its own YAML decoding.
		return nil, nil, append(w.problems, &FieldError{File: name, Problem: strings.TrimPrefix(err.Error(), "yaml: ")}).err()
	}
	return w.lines, w.problems, nil
}

// laterDocument returns the problem of a YAML document after the first
// one dec read from data: the config is one document, and the YAML
// library reads only the first, so the settings of a second ("---" and
// more settings, as when two files are joined) were dropped without a
// word. An empty document after the first ("---" at the end) is no
// problem; one that does not parse is the file's syntax error.
func laterDocument(name string, data []byte, dec *yaml.Decoder) *FieldError {
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return syntaxError(name, data, err)
		}
		if len(next.Content) > 0 && next.Content[0].Tag != "!!null" {
			return &FieldError{File: name, Line: next.Line,
				Problem: `the file holds more than one YAML document (this "---" starts the second); llmrelay reads one: put every setting in one document`}
		}
	}
}

// prune leaves out of n what the walk found wrong: a mapping's pair whose
// key or value is, and a list's item that is, replaced by an empty value
// so that the items after it keep their index.
func (w *walker) prune(n *yaml.Node) {
	isBad := func(n *yaml.Node) bool { return w.bad[n] || n.Kind == yaml.AliasNode && w.bad[n.Alias] }
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isBad(k) || isBad(v) {
				continue
			}
			w.prune(v)
			kept = append(kept, k, v)
		}
		n.Content = kept
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if isBad(item) {
				n.Content[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
				continue
			}
			w.prune(item)
		}
	}
}

// yamlLine finds the line in the YAML library's syntax errors, which have
// no type of their own: "yaml: line 3: mapping values are not allowed ...".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// hashLinePasted matches a key's sha256 set to the whole line `llmrelay
// hash-key` prints, unquoted: "sha256: sha256: 9f86...", which is not YAML.
var hashLinePasted = regexp.MustCompile(`sha256:\s*sha256:\s*([0-9A-Fa-f]*)`)

// syntaxError describes YAML that does not parse.
func syntaxError(name string, data []byte, err error) *FieldError {
	fe := &FieldError{File: name, Problem: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return fe
	}
	fe.Line, _ = strconv.Atoi(m[1])
	fe.Problem = "not valid YAML: " + m[2]
	lines := strings.Split(string(data), "\n")
	if fe.Line < 1 || fe.Line > len(lines) {
		return fe
	}
	if tab := tabIndented(lines, fe.Line); tab > 0 {
		fe.Line = tab
		fe.Problem = "not valid YAML: tab characters are not allowed in YAML; indent with spaces"
		return fe
	}
	text := lines[fe.Line-1]
	if h := hashLinePasted.FindStringSubmatch(text); h != nil {
		fe.Problem = fmt.Sprintf(`not valid YAML: the whole line that hash-key prints was pasted after "sha256:"; `+
			`write "sha256:" once: sha256: %s`, shortHash(h[1]))
	} else if strings.Contains(m[2], "mapping values are not allowed") {
		fe.Problem += `; a value that contains ": " must be quoted`
	}
	return fe
}

// tabIndented returns the line, of the one the YAML library blamed and
// the next (it often names the line before), whose indentation holds a
// tab, or 0.
func tabIndented(lines []string, blamed int) int {
	for n := blamed; n <= blamed+1 && n <= len(lines); n++ {
		text := lines[n-1]
		indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
		if strings.Contains(indent, "\t") {
			return n
		}
	}
	return 0
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	if h == "" {
		return "<64 hex digits>"
	}
	return h
}

var (
	durationType    = reflect.TypeFor[time.Duration]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

// durationHint ends every message about a duration that does not parse.
const durationHint = "use a Go duration such as 30s or 1m30s (units ms, s, m, h)"

// walker checks a YAML document against a Go type before it is decoded,
// noting the line of every setting.
type walker struct {
	file     string
	lines    map[string]int
	problems Problems
	aliased  map[*yaml.Node]bool // anchored nodes already walked
	bad      map[*yaml.Node]bool // the nodes problems were found in, for prune
}

func (w *walker) fail(n *yaml.Node, path, format string, args ...any) {
	w.problems = append(w.problems, &FieldError{Path: path, File: w.file, Line: n.Line, Problem: fmt.Sprintf(format, args...)})
	w.bad[n] = true
}

// walk checks node n, found at path, against type t.
func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		// An anchored value is checked once, where it is defined: walking
		// it at every alias would let a few lines of aliases of aliases
		// expand exponentially (the decoder refuses excessive aliasing).
		if n.Alias == nil || w.aliased[n.Alias] {
			return
		}
		w.aliased[n.Alias] = true
		n = n.Alias
	}
	if n.Anchor != "" {
		if w.aliased[n] {
			return
		}
		w.aliased[n] = true
	}
	if n.Tag == "!!null" {
		return // an empty value leaves the setting as it was
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return // the type decodes itself
	}
	switch {
	case t == durationType:
		w.duration(n, path)
	case t.Kind() == reflect.Pointer:
		w.walk(n, t.Elem(), path)
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.fail(n, path, "want a section of settings (one \"name: value\" per line), not %s", describe(n))
			return
		}
		w.section(n, t, path)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.fail(n, path, "want a list (one \"- item\" per line, or [a, b]), not %s", describe(n))
			return
		}
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			w.lines[p] = item.Line
			w.walk(item, t.Elem(), p)
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.fail(n, path, "want \"name: value\" pairs, not %s", describe(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			w.lines[path+"."+k.Value] = k.Line
			w.walk(v, t.Elem(), path+"."+k.Value)
		}
	case t.Kind() == reflect.Interface:
	default:
		w.scalar(n, t, path)
	}
}

// removed says why settings that earlier versions read are gone, and
// what replaces them.
var removed = map[string]string{
	"retry.budget.max_tokens":  budgetReplaced,
	"retry.budget.token_ratio": budgetReplaced,
}

const budgetReplaced = "removed: the retry budget is no longer a token bucket (which could wedge); " +
	"it bounds the retries in flight with budget_percent (default 20) and min_retry_concurrency (default 3), " +
	"or enabled: false turns it off (docs/retries.md)"

// section checks a mapping against struct type t: every key must name one
// of its fields, once.
func (w *walker) section(n *yaml.Node, t reflect.Type, path string) {
	fields := yamlFields(t)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			w.fail(k, p, "set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fields[k.Value]
		if !ok {
			if why, gone := removed[p]; gone {
				w.fail(k, p, "%s", why)
				continue
			}
			hint, meant := suggest(k.Value, t, path)
			w.fail(k, p, "unknown field%s", hint)
			w.problems[len(w.problems)-1].meant = meant
			continue
		}
		w.lines[p] = k.Line
		w.walk(v, f.Type, p)
	}
}

// duration checks a duration: a string time.ParseDuration accepts, or a
// bare 0.
func (w *walker) duration(n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode {
		w.fail(n, path, "want a duration, not %s; %s", describe(n), durationHint)
		return
	}
	if n.Tag == "!!int" || n.Tag == "!!float" {
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil && f == 0 {
			n.Tag, n.Value = "!!str", "0s" // a bare 0 needs no unit
			return
		}
		w.fail(n, path, "%s has no unit; %s", n.Value, durationHint)
		return
	}
	if _, err := time.ParseDuration(n.Value); err != nil {
		w.fail(n, path, "%q is not a duration; %s", n.Value, durationHint)
	}
}

// scalar checks a single value of type t (a string, number or boolean).
func (w *walker) scalar(n *yaml.Node, t reflect.Type, path string) {
	want := map[reflect.Kind]string{
		reflect.Bool:    "true or false",
		reflect.String:  "a text value",
		reflect.Float32: "a number",
		reflect.Float64: "a number",
	}[t.Kind()]
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		want = "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "a whole number, 0 or more"
	}
	if n.Kind != yaml.ScalarNode {
		w.fail(n, path, "want %s, not %s", want, describe(n))
		return
	}
	v := reflect.New(t)
	if err := n.Decode(v.Interface()); err != nil || fraction(n, t) {
		w.fail(n, path, "want %s, not %q", want, n.Value)
		return
	}
	// YAML spells NaN and infinity .nan and .inf; no setting means them,
	// and a range check (x < 0 || x > 2) lets NaN through.
	if v.Elem().CanFloat() {
		if f := v.Elem().Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			w.fail(n, path, "want a finite number, not %q", n.Value)
		}
	}
}

// fraction reports whether n is a number with a fractional part for a
// whole-number setting of type t, which the YAML library would silently
// truncate (max_concurrent: 2.7 as 2). A float that is a whole number
// (2e6) is taken.
func fraction(n *yaml.Node, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return false
	}
	if n.ShortTag() != "!!float" {
		return false
	}
	var f float64
	return n.Decode(&f) == nil && f != math.Trunc(f)
}

// describe names the kind of YAML value n is, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a section"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// yamlFields returns struct type t's fields by YAML name.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for f := range fieldsOf(t) {
		out[yamlName(f)] = f
	}
	return out
}

// fieldsOf yields the exported fields of struct type t that YAML sees,
// those of an embedded `yaml:",inline"` struct (a section composed of
// parts owned by different packages) as its own.
func fieldsOf(t reflect.Type) func(yield func(reflect.StructField) bool) {
	return func(yield func(reflect.StructField) bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			switch {
			case !f.IsExported() || yamlName(f) == "-":
				continue
			case isInline(f):
				for g := range fieldsOf(f.Type) {
					if !yield(g) {
						return
					}
				}
				continue
			}
			if !yield(f) {
				return
			}
		}
	}
}

// isInline reports whether f is an embedded struct whose fields YAML reads
// as its parent's (`yaml:",inline"`).
func isInline(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return f.Anonymous && opts == "inline" && f.Type.Kind() == reflect.Struct
}

// yamlName returns the name a struct field has in YAML: its tag's, else
// the field name in lower case, as the YAML library does.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest returns "; did you mean X?" for an unknown key in the section of
// type t at path, and the path of X: the field whose name is closest to
// key (setting.Closest), else a field of that name in another section;
// else the list of the section's fields.
func suggest(key string, t reflect.Type, path string) (hint, meant string) {
	var names []string
	for f := range fieldsOf(t) {
		names = append(names, yamlName(f))
	}
	if best := setting.Closest(key, names); best != "" {
		return "; did you mean " + best + "?", join(path, best)
	}
	if elsewhere := findField(reflect.TypeFor[Config](), "", setting.Squash(key)); elsewhere != "" && elsewhere != join(path, key) {
		return fmt.Sprintf("; did you mean %s? (%s belongs in %s)", elsewhere, key, parentOf(elsewhere)), elsewhere
	}
	slices.Sort(names)
	where := "here"
	if path != "" {
		where = "in " + path
	}
	return fmt.Sprintf("; the fields %s are %s", where, strings.Join(names, ", ")), ""
}

// findField returns the path of the first field, anywhere in type t, whose
// squashed name is key; list items appear as [0].
func findField(t reflect.Type, path, key string) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			path += "[0]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == durationType {
		return ""
	}
	for f := range fieldsOf(t) {
		if setting.Squash(yamlName(f)) == key {
			return join(path, yamlName(f))
		}
	}
	for f := range fieldsOf(t) {
		if p := findField(f.Type, join(path, yamlName(f)), key); p != "" {
			return p
		}
	}
	return ""
}

func parentOf(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return "the top level"
}

// ParseBudget reads one budget written as in the config file, such as
// "{window: day, max_cost_usd: 5}", with the file's checks of shape (an
// unknown field, a word or a fraction for a number); the budget's own
// rules (spend.CheckBudgets) are the caller's. A problem is a
// *FieldError naming the field, without a file or line.
func ParseBudget(s string) (spend.Budget, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return spend.Budget{}, &FieldError{Problem: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 {
		return spend.Budget{}, &FieldError{Problem: "is empty"}
	}
	w := walker{lines: map[string]int{}, aliased: map[*yaml.Node]bool{}, bad: map[*yaml.Node]bool{}}
	n := doc.Content[0]
	w.walk(n, reflect.TypeFor[spend.Budget](), "")
	if len(w.problems) > 0 {
		p := *w.problems[0]
		p.Line = 0
		return spend.Budget{}, &p
	}
	var b spend.Budget
	if err := n.Decode(&b); err != nil {
		return spend.Budget{}, &FieldError{Problem: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	return b, nil
}
