package memory_test

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

func TestKeyStoreConformance(t *testing.T) {
	statetest.RunKeyStore(t, func(*testing.T) state.KeyStore { return memory.New() })
}

func TestSpendingConformance(t *testing.T) {
	statetest.RunSpending(t, func(*testing.T) state.Spending { return memory.New() })
}
