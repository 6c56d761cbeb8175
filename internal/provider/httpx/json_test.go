package httpx

import (
	"errors"
	"testing"
)

func TestJSONDecoder(t *testing.T) {
	type v struct {
		A string `json:"a"`
		B []int  `json:"b"`
	}
	var j JSONDecoder
	steps := []struct {
		data    string
		want    v
		wantErr bool
	}{
		{`{"a":"x","b":[1,2]}`, v{A: "x", B: []int{1, 2}}, false},
		{`  {"a": "y"}   `, v{A: "y"}, false},
		{`{"a":"z"}{"a":"w"}`, v{}, true},
		{`{"a":"after an error"}`, v{A: "after an error"}, false},
		{`{"a":`, v{}, true},
		{`{"b":[3]}`, v{B: []int{3}}, false},
		{`   `, v{}, true},
		{`{"a":"last"}`, v{A: "last"}, false},
	}
	for i, s := range steps {
		var got v
		err := j.Decode([]byte(s.data), &got)
		if (err != nil) != s.wantErr {
			t.Fatalf("step %d (%s): error %v, want error %v", i, s.data, err, s.wantErr)
		}
		if err == nil && (got.A != s.want.A || len(got.B) != len(s.want.B)) {
			t.Errorf("step %d (%s): got %+v, want %+v", i, s.data, got, s.want)
		}
	}
	if err := j.Decode([]byte(`{"a":"x"} x`), new(v)); !errors.Is(err, errTrailingData) {
		t.Errorf("trailing garbage: %v, want errTrailingData", err)
	}
}
