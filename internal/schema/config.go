package schema

import (
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// Config is the structured_output section of llmrelay's configuration:
// the bounds on structured-output requests (DefaultConfig's values are the
// only defaults). The zero Config bounds nothing but the work of a check
// (DefaultValidationBudget) and allows no re-ask: tests and tools set what
// they need.
type Config struct {
	// DefaultValidationRetries is how many re-asks a call may make when the
	// request leaves max_validation_retries unset.
	DefaultValidationRetries int `yaml:"default_validation_retries"`
	// MaxValidationRetries caps a request's max_validation_retries; 0
	// forbids re-asking.
	MaxValidationRetries int `yaml:"max_validation_retries"`
	// MaxSchemaBytes bounds a request's schema, measured as compact JSON.
	// Larger schemas fail with ErrSchemaTooLarge. Zero or less: no bound.
	MaxSchemaBytes int `yaml:"max_schema_bytes"`
	// SchemaCacheSize bounds how many compiled schemas a Cache keeps; the
	// least recently used one is dropped first. Zero or less: no bound.
	SchemaCacheSize int `yaml:"schema_cache_size"`
	// ValidationBudget bounds the work of checking one reply, in
	// validation steps (see DefaultValidationBudget, its default when zero
	// or less): a check that would take more fails with a *BudgetError,
	// and Schema.Admit refuses a schema on which any value would.
	ValidationBudget int `yaml:"validation_budget"`
	// PartialObjectMinInterval is the shortest time between two
	// partial_object events of an attempt, whatever the request asks:
	// a request's partial_object_interval shorter than it is raised to it.
	PartialObjectMinInterval time.Duration `yaml:"partial_object_min_interval"`
	// AssertFormat makes the "format" keyword an assertion ("email",
	// "date-time", ...). Draft 2020-12 makes it an annotation only, which is
	// the default; not a setting.
	AssertFormat bool `yaml:"-"`
}

// DefaultConfig returns the structured_output section's defaults.
func DefaultConfig() Config {
	return Config{DefaultValidationRetries: 2, MaxValidationRetries: 5, MaxSchemaBytes: 64 << 10, SchemaCacheSize: 256, ValidationBudget: DefaultValidationBudget}
}

// Check reports the section's problems.
func (c Config) Check(p setting.Problems) {
	if c.MaxValidationRetries < 0 {
		p.Bad("max_validation_retries", "must not be negative")
	}
	if c.DefaultValidationRetries < 0 || c.DefaultValidationRetries > c.MaxValidationRetries {
		p.Between("default_validation_retries", "max_validation_retries",
			"%d is not within 0..max_validation_retries (%d)", c.DefaultValidationRetries, c.MaxValidationRetries)
	}
	if c.MaxSchemaBytes <= 0 {
		p.Bad("max_schema_bytes", "must be positive")
	}
	if c.SchemaCacheSize <= 0 {
		p.Bad("schema_cache_size", "must be positive")
	}
	if c.ValidationBudget <= 0 {
		p.Bad("validation_budget", "must be positive")
	}
	if c.PartialObjectMinInterval < 0 || c.PartialObjectMinInterval > time.Minute {
		p.Bad("partial_object_min_interval", "%s is not within 0..1m", setting.Duration(c.PartialObjectMinInterval))
	}
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
