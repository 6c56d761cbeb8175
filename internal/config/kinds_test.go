package config

// Provider kinds are checked against the adapters registered in the
// program that loads the config; the server links every adapter
// (internal/server/providers.go), and so do these tests.
import (
	_ "github.com/llmrelay/llmrelay/internal/provider/anthropic"
	_ "github.com/llmrelay/llmrelay/internal/provider/gemini"
	_ "github.com/llmrelay/llmrelay/internal/provider/mock"
	_ "github.com/llmrelay/llmrelay/internal/provider/openai"
)
