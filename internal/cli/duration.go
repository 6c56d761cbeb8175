package cli

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// durationHint says what a duration flag takes, as the config's own
// durations say it.
const durationHint = "use a Go duration such as 30s or 1m30s (units ms, s, m, h)"

// durationFlag defines a duration flag on fs, as fs.Duration does, but a
// value it cannot take says why ("5" has no unit) instead of the flag
// package's "parse error".
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	d := durationValue(value)
	fs.Var(&d, name, usage)
	return (*time.Duration)(&d)
}

// durationValue is a duration flag's value.
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("%s has no unit; %s", s, durationHint)
		}
		return fmt.Errorf("%q is not a duration; %s", s, durationHint)
	}
	*d = durationValue(v)
	return nil
}
