package server

// The provider adapters register their kinds in init functions.
import (
	_ "github.com/llmrelay/llmrelay/internal/provider/anthropic"
	_ "github.com/llmrelay/llmrelay/internal/provider/gemini"
	_ "github.com/llmrelay/llmrelay/internal/provider/mock"
	_ "github.com/llmrelay/llmrelay/internal/provider/openai"
)
