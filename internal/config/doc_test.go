package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// yamlPaths lists every setting of t, as docs/configuration.md writes
// them: sections joined by dots, a list's items as [] and a map's values
// as <name> (providers[].transport.ping_interval, pricing.models.<name>.input).
func yamlPaths(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var paths []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			if f.Anonymous {
				paths = append(paths, yamlPaths(f.Type, prefix)...)
			}
			continue
		}
		path := prefix + name
		paths = append(paths, path)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]():
			paths = append(paths, yamlPaths(ft, path+".")...)
		case ft.Kind() == reflect.Slice && structType(ft.Elem()):
			paths = append(paths, yamlPaths(ft.Elem(), path+"[].")...)
		case ft.Kind() == reflect.Map && structType(ft.Elem()):
			paths = append(paths, yamlPaths(ft.Elem(), path+".<name>.")...)
		}
	}
	return paths
}

func structType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// TestConfigurationDocCoversEverySetting: docs/configuration.md names every
// setting of the config file, so a new field cannot go undocumented.
func TestConfigurationDocCoversEverySetting(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := yamlPaths(reflect.TypeFor[Config](), "")
	if len(paths) < 100 {
		t.Fatalf("found only %d settings: the walk of Config is broken", len(paths))
	}
	for _, p := range paths {
		if !strings.Contains(string(doc), "`"+p+"`") {
			t.Errorf("docs/configuration.md does not name the setting `%s`", p)
		}
	}
}
