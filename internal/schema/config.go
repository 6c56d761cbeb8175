package schema

import "time"

// Config is the server's structured-output configuration; internal/config
// makes it from its `structured_output:` section (config.Config.SchemaConfig),
// whose defaults are the only defaults. The zero Config bounds nothing but
// the work of a check (DefaultValidationBudget) and allows no re-ask: tests
// and tools set what they need.
type Config struct {
	// MaxSchemaBytes bounds a request's schema, measured as compact JSON.
	// Larger schemas fail with ErrSchemaTooLarge. Zero or less: no bound.
	MaxSchemaBytes int
	// SchemaCacheSize bounds how many compiled schemas a Cache keeps; the
	// least recently used one is dropped first. Zero or less: no bound.
	SchemaCacheSize int
	// DefaultValidationRetries is how many re-asks a call may make when the
	// request leaves max_validation_retries unset.
	DefaultValidationRetries int
	// MaxValidationRetries caps a request's max_validation_retries; 0
	// forbids re-asking.
	MaxValidationRetries int
	// AssertFormat makes the "format" keyword an assertion ("email",
	// "date-time", ...). Draft 2020-12 makes it an annotation only, which is
	// the default.
	AssertFormat bool
	// ValidationBudget bounds the work of checking one reply, in
	// validation steps (see DefaultValidationBudget, its default when zero
	// or less): a check that would take more fails with a *BudgetError,
	// and Schema.Admit refuses a schema on which any value would.
	ValidationBudget int
	// PartialObjectMinInterval is the shortest time between two
	// partial_object events of an attempt, whatever the request asks:
	// a request's partial_object_interval shorter than it is raised to it.
	PartialObjectMinInterval time.Duration
}

// PartialObjectInterval returns the time a call leaves between two
// partial objects: the request's partial_object_interval, raised to
// PartialObjectMinInterval.
func (c Config) PartialObjectInterval(requested time.Duration) time.Duration {
	return max(requested, c.PartialObjectMinInterval, 0)
}

// ValidationRetries returns how many times a call may re-ask: the request's
// max_validation_retries (nil when unset, which means
// DefaultValidationRetries), clamped to 0..MaxValidationRetries.
func (c Config) ValidationRetries(requested *uint32) int {
	n := c.DefaultValidationRetries
	if requested != nil {
		n = int(min(*requested, uint32(max(c.MaxValidationRetries, 0))))
	}
	return max(min(n, c.MaxValidationRetries), 0)
}

// validationBudget returns ValidationBudget, or DefaultValidationBudget
// when it is zero or less.
func (c Config) validationBudget() int {
	if c.ValidationBudget > 0 {
		return c.ValidationBudget
	}
	return DefaultValidationBudget
}
