// Command server is llmrelay under the directory name the repository's
// layout keeps; it is the same program as cmd/llmrelay (see internal/cli).
// `make build` and `go install ./cmd/llmrelay` give a binary named llmrelay.
package main

import (
	"os"

	"github.com/llmrelay/llmrelay/internal/cli"
)

func main() { os.Exit(cli.Main()) }
