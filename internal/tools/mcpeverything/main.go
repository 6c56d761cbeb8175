// Command mcpeverything runs the pinned @modelcontextprotocol/server-everything
// (internal/servertools/mcptest: installed from its npm lockfile when
// missing) over MCP's streamable HTTP transport on a free loopback port,
// for scripts: scripts/test-clients.sh starts it for the clients'
// server-tools scenario.
//
//	go run ./internal/tools/mcpeverything -url-file /tmp/everything.url
//
// It prints "mcpeverything serving URL" once the server listens (and, with
// -url-file, writes URL, http://127.0.0.1:PORT/mcp, to that file, whole or
// not at all, for a script to wait on), and stops the server on SIGTERM or
// SIGINT. It exits 1 when the server cannot run here (no Node, or the
// package cannot be installed), saying why.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

func main() {
	urlFile := flag.String("url-file", "", "write the server's URL to this file once it listens")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	e, err := mcptest.RunEverything()
	if err != nil {
		log.Fatalf("mcpeverything: %v", err)
	}
	defer e.Kill()
	fmt.Printf("mcpeverything serving %s (@modelcontextprotocol/server-everything %s)\n", e.URL, mcptest.EverythingVersion)
	if *urlFile != "" {
		// Written aside and renamed, so that a reader sees all of it or no file.
		tmp := *urlFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(e.URL), 0o644); err != nil {
			e.Kill()
			log.Fatal(err)
		}
		if err := os.Rename(tmp, *urlFile); err != nil {
			e.Kill()
			log.Fatal(err)
		}
	}
	<-ctx.Done()
}
