package schema

// Defaults for Config's zero fields.
const (
	DefaultMaxSchemaBytes       = 64 << 10
	DefaultCacheEntries         = 512
	DefaultMaxValidationRetries = 5
	// DefaultValidationRetries is how many times a call re-asks when the
	// request leaves response_format.max_validation_retries unset.
	DefaultValidationRetries = 2
)

// Config is the server's structured-output configuration (the
// `structured_output:` section). The zero value takes the defaults.
type Config struct {
	// MaxSchemaBytes bounds a request's schema, measured as compact JSON.
	// Larger schemas fail with ErrSchemaTooLarge. Default 64 KiB.
	MaxSchemaBytes int `yaml:"max_schema_bytes"`
	// CacheEntries bounds how many compiled schemas Cache keeps; the least
	// recently used one is dropped first. Default 512.
	CacheEntries int `yaml:"cache_entries"`
	// MaxValidationRetries is the most re-asks a request may ask for; larger
	// requests are clamped. Zero takes the default (5); a negative value
	// forbids re-asking.
	MaxValidationRetries int `yaml:"max_validation_retries"`
	// AssertFormat makes the "format" keyword an assertion ("email",
	// "date-time", ...). Draft 2020-12 treats it as an annotation only,
	// which is the default.
	AssertFormat bool `yaml:"assert_format"`
}

func (c Config) withDefaults() Config {
	if c.MaxSchemaBytes <= 0 {
		c.MaxSchemaBytes = DefaultMaxSchemaBytes
	}
	if c.CacheEntries <= 0 {
		c.CacheEntries = DefaultCacheEntries
	}
	if c.MaxValidationRetries == 0 {
		c.MaxValidationRetries = DefaultMaxValidationRetries
	}
	return c
}

// ValidationRetries returns how many times a call may re-ask: the request's
// max_validation_retries (nil when unset, which means
// DefaultValidationRetries), clamped to MaxValidationRetries.
func (c Config) ValidationRetries(requested *uint32) int {
	limit := max(c.withDefaults().MaxValidationRetries, 0)
	n := DefaultValidationRetries
	if requested != nil {
		n = int(min(*requested, uint32(limit)))
	}
	return min(n, limit)
}
