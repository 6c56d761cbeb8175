package schema

// Config is the server's structured-output configuration; it mirrors the
// `structured_output:` section of internal/config. DefaultConfig holds the
// defaults.
type Config struct {
	// MaxSchemaBytes bounds a request's schema, measured as compact JSON.
	// Larger schemas fail with ErrSchemaTooLarge. Zero or less means 64 KiB.
	MaxSchemaBytes int
	// SchemaCacheSize bounds how many compiled schemas a Cache keeps; the
	// least recently used one is dropped first. Zero or less means 256.
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
}

// DefaultConfig returns the defaults: 64 KiB schemas, 256 cached, 2
// re-asks unless the request says otherwise, at most 5.
func DefaultConfig() Config {
	return Config{MaxSchemaBytes: 64 << 10, SchemaCacheSize: 256, DefaultValidationRetries: 2, MaxValidationRetries: 5}
}

// withSizes fills in the size bounds left at zero.
func (c Config) withSizes() Config {
	d := DefaultConfig()
	if c.MaxSchemaBytes <= 0 {
		c.MaxSchemaBytes = d.MaxSchemaBytes
	}
	if c.SchemaCacheSize <= 0 {
		c.SchemaCacheSize = d.SchemaCacheSize
	}
	return c
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
