package config

import (
	"bytes"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/setting"
)

// Masked replaces a secret value in Redacted's copy.
const Masked = "[redacted]"

// secretName matches the names of headers and URL query parameters that
// usually carry credentials.
var secretName = regexp.MustCompile(`(?i)auth|key|token|secret|passw|cookie|credential|signature|session`)

// secretValue matches values that look like credentials whatever their
// name: an HTTP authorization value, or a long run of key characters with
// both letters and digits.
var (
	authScheme = regexp.MustCompile(`(?i)^(bearer|basic|token)\s`)
	keyLike    = regexp.MustCompile(`^[A-Za-z0-9_.\-]{20,}$`)
	hasLetter  = regexp.MustCompile(`[A-Za-z]`)
	hasDigit   = regexp.MustCompile(`[0-9]`)
)

func secretLike(name, value string) bool {
	return secretName.MatchString(name) || authScheme.MatchString(value) ||
		(keyLike.MatchString(value) && hasLetter.MatchString(value) && hasDigit.MatchString(value))
}

// Redacted returns a copy that is safe to show or log. The config holds no
// secrets by design (provider keys are named by environment variable, API
// keys listed by hash, MCP servers' headers named by environment variable),
// but a provider's headers and base_url, and an MCP server's url, could:
// header values and URL query values that look secret, and any password in
// a URL, are Masked. Key hashes are shown normalised (auth.NormalizeHash): a hash
// does not reveal its key.
func (c *Config) Redacted() Config {
	cp := *c
	cp.Auth.Keys = slices.Clone(c.Auth.Keys)
	for i := range cp.Auth.Keys {
		cp.Auth.Keys[i].SHA256 = auth.NormalizeHash(cp.Auth.Keys[i].SHA256)
	}
	cp.Providers = slices.Clone(c.Providers)
	for i := range cp.Providers {
		cp.Providers[i] = redactProvider(cp.Providers[i])
	}
	cp.Tools.MCPServers = slices.Clone(c.Tools.MCPServers)
	for i := range cp.Tools.MCPServers {
		cp.Tools.MCPServers[i].URL = redactURL(cp.Tools.MCPServers[i].URL)
	}
	return cp
}

func redactProvider(p provider.Config) provider.Config {
	if p.Headers != nil {
		p.Headers = maps.Clone(p.Headers)
		for k, v := range p.Headers {
			if secretLike(k, v) {
				p.Headers[k] = Masked
			}
		}
	}
	p.BaseURL = redactURL(p.BaseURL)
	return p
}

// redactURL masks a URL's password and its query values that look secret.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return Masked // unparsable: it might hold anything
	case raw == "":
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), Masked)
	}
	if q := u.Query(); len(q) > 0 {
		for k, vs := range q {
			for i, v := range vs {
				if secretLike(k, v) {
					vs[i] = Masked
				}
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// YAML returns c as YAML in the config file's own shape, every
// setting included, durations written as Go durations ("30s"), so that the
// output reads back as the same configuration. Call it on Redacted's copy to
// show a configuration.
func (c *Config) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(toNode(reflect.ValueOf(*c))); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// formatDuration writes d as a Go duration without zero trailing units.
func formatDuration(d time.Duration) string { return setting.Duration(d) }

// toNode builds the YAML node for v, following the yaml tags as decoding
// does.
func toNode(v reflect.Value) *yaml.Node {
	t := v.Type()
	scalar := func(tag, value string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value} }
	switch {
	case t == durationType:
		return scalar("!!str", formatDuration(time.Duration(v.Int())))
	case t.Kind() == reflect.Pointer, t.Kind() == reflect.Interface:
		// Interfaces hold free-form values: provider options, schemas.
		if v.IsNil() {
			return scalar("!!null", "null")
		}
		return toNode(v.Elem())
	case t.Kind() == reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for i := range t.NumField() {
			f := t.Field(i)
			switch {
			case !f.IsExported() || yamlName(f) == "-":
				continue
			case isInline(f):
				n.Content = append(n.Content, toNode(v.Field(i)).Content...)
				continue
			}
			n.Content = append(n.Content, scalar("!!str", yamlName(f)), toNode(v.Field(i)))
		}
		return n
	case t.Kind() == reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		flow := true
		for i := range v.Len() {
			item := toNode(v.Index(i))
			flow = flow && item.Kind == yaml.ScalarNode
			n.Content = append(n.Content, item)
		}
		if flow {
			n.Style = yaml.FlowStyle
		}
		return n
	case t.Kind() == reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			n.Content = append(n.Content, scalar("!!str", k.String()), toNode(v.MapIndex(k)))
		}
		if len(keys) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	}
	// Numbers and booleans go untagged: "100" for a float reads back
	// as 100 without the !!float a tag would print.
	switch t.Kind() {
	case reflect.Bool:
		return scalar("", strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return scalar("", strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return scalar("", strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		return scalar("", strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.String:
		return scalar("!!str", v.String())
	}
	return scalar("!!null", "null")
}
