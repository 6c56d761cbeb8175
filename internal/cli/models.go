package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

var modelsCommand = &command{
	name:    "models",
	usage:   "models [flags]",
	summary: "list the models and routes a running server offers",
	about: `Calls ListModels on a running llmrelay and prints the models the key may
use, one a line: the name to pass to generate -m, its provider's kind, and,
for a route, its targets in order. Then, under their own heading, the
providers that accept any model name (their config lists no models), each
with how to call it and, with a key, the key's patterns that say which
names it may call. --json prints the response as JSON, on one line.

Exit status: 0 listed; 1 the call failed; 2 the command line was wrong.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var cf callFlags
		cf.define(fs)
		provider := fs.String("provider", "", "list only this `PROVIDER`'s models")
		timeout := durationFlag(fs, "timeout", 30*time.Second, "give up after `DURATION`")
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("models", "models: unexpected argument %q (models takes only flags)", args[0])
			}
			if err := checkWait("models", *timeout); err != nil {
				return err
			}
			c, addr, err := cf.dial("models", env)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			resp, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{Provider: *provider})
			if err != nil {
				return callError(addr, err)
			}
			anyModel := resp.GetAnyModelProviders()
			if *provider != "" && len(resp.GetModels()) == 0 && len(anyModel) == 0 {
				// The server answers an unknown provider with an empty
				// list, as it answers one whose models the key may not
				// use: what it lists without the filter tells them apart.
				return unknownProvider(ctx, c, addr, *provider, cf.apiKey(env) != "")
			}
			if cf.json {
				return printJSON(env.Stdout, resp)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			if len(resp.GetModels()) > 0 || len(anyModel) == 0 {
				fmt.Fprintln(tw, "MODEL\tKIND\tTARGETS")
				for _, m := range resp.GetModels() {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", m.GetId(), modelKind(m), modelTargets(m))
				}
				if len(anyModel) > 0 {
					fmt.Fprintln(tw)
				}
			}
			if len(anyModel) > 0 {
				// A table of its own: the first column of the one above
				// is a name to call, and these have none to list.
				fmt.Fprintln(tw, "ANY-MODEL PROVIDER\tKIND\tCALL AS\tTHE KEY ALLOWS")
				for _, p := range anyModel {
					allows := strings.Join(p.GetKeyPatterns(), ", ")
					if allows == "" {
						allows = "any model (no API keys)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s/<model>\t%s\n", p.GetProvider(), p.GetProviderKind(), p.GetProvider(), allows)
				}
			}
			return tw.Flush()
		}
	},
}

// unknownProvider is the error of models --provider NAME when the server
// lists no model of NAME: it names the providers the server does list
// (those whose models the key may use, with a key).
func unknownProvider(ctx context.Context, c *client.Client, addr, name string, keyed bool) error {
	all, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
	if err != nil {
		return callError(addr, err)
	}
	var providers []string
	for _, m := range all.GetModels() {
		if p := m.GetProvider(); p != "" && !slices.Contains(providers, p) {
			providers = append(providers, p)
		}
	}
	for _, p := range all.GetAnyModelProviders() {
		if !slices.Contains(providers, p.GetProvider()) {
			providers = append(providers, p.GetProvider())
		}
	}
	slices.Sort(providers)
	whose := "the providers it lists are"
	if keyed {
		whose = "the providers whose models this key may use are"
	}
	if slices.Contains(providers, name) {
		// Listed since: the server's config changed between the calls.
		return fmt.Errorf("models: %s lists no models of provider %q; run llmrelay models --provider %s again", addr, name, name)
	}
	if len(providers) == 0 {
		return fmt.Errorf("models: %s lists no provider %q; it lists no models at all", addr, name)
	}
	return fmt.Errorf("models: %s lists no provider %q; %s %s", addr, name, whose, strings.Join(providers, ", "))
}

// printJSON prints a response as one line of JSON (--json of models and
// tools), as every --json prints its documents: jq and scripts that read
// lines take them so (`jq -c .` indents nothing; `jq .` indents).
func printJSON(w io.Writer, m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// modelKind is a model's provider kind, or "route".
func modelKind(m *llmrelayv1.Model) string {
	if m.GetKind() == llmrelayv1.ModelKind_MODEL_KIND_ROUTE {
		return "route"
	}
	kind := m.GetProviderKind()
	if m.GetHealth().GetEjected() {
		kind += " (ejected)"
	}
	return kind
}

// modelTargets lists a route's targets, "-" for a provider's model.
func modelTargets(m *llmrelayv1.Model) string {
	if len(m.GetTargets()) == 0 {
		return "-"
	}
	names := make([]string, len(m.GetTargets()))
	for i, t := range m.GetTargets() {
		names[i] = t.GetModel()
		if t.GetWeight() > 0 && m.GetBalance() == llmrelayv1.RouteBalance_ROUTE_BALANCE_WEIGHTED {
			names[i] += fmt.Sprintf(" (weight %d)", t.GetWeight())
		}
		if t.GetHealth().GetEjected() {
			names[i] += " (ejected)"
		}
	}
	return strings.Join(names, ", ")
}
