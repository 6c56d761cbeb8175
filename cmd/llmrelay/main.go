// Command llmrelay is the llmrelay gRPC gateway: `llmrelay help` lists its
// commands. The command line lives in internal/cli.
package main

import (
	"os"

	"github.com/llmrelay/llmrelay/internal/cli"
)

func main() { os.Exit(cli.Main()) }
