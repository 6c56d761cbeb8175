package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

var toolsCommand = &command{
	name:    "tools",
	usage:   "tools [flags]",
	summary: "list the server tools a running server offers the key",
	about: `Calls ListTools on a running llmrelay and prints the server tools (tools of
its MCP servers, tools.mcp_servers) the key may offer a model, one a line:
the name to pass to generate --server-tools, whether its MCP server answers
right now, and what the tool does. An MCP server that is not answering is
named on stderr; only the MCP servers the key may use a tool of are shown,
and a --server that is not one of them exits 1, naming those that are.
--json prints the response as JSON, on one line (with each tool's input
schema and the name the model sees it by).

Exit status: 0 listed; 1 the call failed; 2 the command line was wrong.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var cf callFlags
		cf.define(fs)
		server := fs.String("server", "", "list only this MCP `SERVER`'s tools (its name in the server's config)")
		timeout := durationFlag(fs, "timeout", 30*time.Second, "give up after `DURATION`")
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("tools", "tools: unexpected argument %q (tools takes only flags)", args[0])
			}
			if err := checkWait("tools", *timeout); err != nil {
				return err
			}
			c, addr, err := cf.dial("tools", env)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			resp, err := c.ListTools(ctx, &llmrelayv1.ListToolsRequest{Server: *server})
			if err != nil {
				return callError(addr, err)
			}
			if *server != "" && len(resp.GetServers()) == 0 {
				// The server answers a server it does not have, or whose
				// tools the key may not use, with an empty list: what it
				// lists without the filter names those the key may use.
				return unknownServer(ctx, c, addr, *server)
			}
			if cf.json {
				return printJSON(env.Stdout, resp)
			}
			if len(resp.GetServers()) == 0 {
				fmt.Fprintln(env.Stderr, "llmrelay: no server tools: the server has no MCP servers (tools.mcp_servers in its config), or none with a tool the key may use (its tools patterns)")
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tAVAILABLE\tDESCRIPTION")
			for _, t := range resp.GetTools() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.GetName(), yesNo(t.GetAvailable()), firstLine(t.GetDescription()))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, s := range resp.GetServers() {
				if !s.GetAvailable() {
					fmt.Fprintf(env.Stderr, "llmrelay: MCP server %s is not answering: its tools cannot be offered until it does\n", s.GetName())
				}
			}
			if len(resp.GetTools()) == 0 {
				fmt.Fprintln(env.Stderr, "llmrelay: the key may use none of the server's tools (its tools patterns)")
			}
			return nil
		}
	},
}

// unknownServer is the error of tools --server NAME when the server has no
// MCP server NAME the key may use a tool of: it names those the key may
// use a tool of.
func unknownServer(ctx context.Context, c *client.Client, addr, name string) error {
	all, err := c.ListTools(ctx, &llmrelayv1.ListToolsRequest{})
	if err != nil {
		return callError(addr, err)
	}
	var names []string
	for _, s := range all.GetServers() {
		names = append(names, s.GetName())
	}
	if slices.Contains(names, name) {
		// Listed since: the server's config changed between the calls.
		return fmt.Errorf("tools: %s has no MCP server %q; run llmrelay tools --server %s again", addr, name, name)
	}
	if len(names) == 0 {
		return fmt.Errorf("tools: %s has no MCP server %q the key may use; it has none (no tools.mcp_servers in its config, or none with a tool the key may use)", addr, name)
	}
	return fmt.Errorf("tools: %s has no MCP server %q the key may use; those the key may use are %s", addr, name, strings.Join(names, ", "))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// firstLine is s's first line, printable, with " …" when more follow:
// a tool's description (an MCP server's text) for a table cell.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return printable(strings.TrimSpace(s[:i])) + " …"
	}
	return printable(s)
}
