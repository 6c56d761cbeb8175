package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/llmrelay/llmrelay/client"
	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
)

var keysCommand = &command{
	name:    "keys",
	usage:   "keys COMMAND [flags]",
	summary: "create, list, change and revoke API keys, and read their usage, on a running server",
	about: `Manages the API keys of a running llmrelay through its admin API
(llmrelay.admin.v1), with a key that has the admin scope ($` + EnvAPIKey + ` or
--key). Keys created here are kept in the server's state store: with the
redis store every replica knows them at once. The keys of the config file
(auth.keys) are listed too, and cannot be changed here. keys teams lists the
config's teams with what their budgets' windows spent.

Budgets are written as in the config file, one --budget each:
  --budget '{window: day, max_cost_usd: 5}' --budget '{window: month, max_tokens: 2000000}'

docs/keys.md has examples.`,
}

func init() {
	keysCommand.subcommands = []*command{keysCreate, keysList, keysGet, keysUpdate, keysRevoke, keysUsage, keysTeams}
}

// adminConn is a connection to a server's admin API.
type adminConn struct {
	client *client.Client
	addr   string
	keys   adminv1.KeyServiceClient
	usage  adminv1.UsageServiceClient
}

// dialAdmin connects to the server of the flags (those of every command
// that calls a running server: --addr, --key, --tls, --plaintext), for
// its admin API.
func dialAdmin(f *callFlags, cmd string, env Env) (*adminConn, error) {
	c, addr, err := f.dial(cmd, env)
	if err != nil {
		return nil, err
	}
	return &adminConn{client: c, addr: addr, keys: adminv1.NewKeyServiceClient(c.Conn()), usage: adminv1.NewUsageServiceClient(c.Conn())}, nil
}

// runAdmin dials the flags' server, makes one call with it and prints the
// answer: as JSON with --json, else as text says.
func runAdmin[R proto.Message](f *callFlags, cmd string, env Env, call func(*adminConn) (R, error), text func(R)) error {
	c, err := dialAdmin(f, cmd, env)
	if err != nil {
		return err
	}
	defer c.client.Close()
	resp, err := call(c)
	if err != nil {
		return callError(c.addr, err)
	}
	if f.json {
		return printJSONLine(env.Stdout, resp)
	}
	text(resp)
	return nil
}

// printJSONLine prints m as one line of JSON with the proto's field names
// (keys list prints one key a line).
func printJSONLine(w io.Writer, m proto.Message) error {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// keySpec are the flags that describe a key, for create and update.
type keySpec struct {
	name              string
	scopes, models    repeated
	budgets, metadata repeated
	team, expires     string
	rps               float64
	burst, maxStreams int
}

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func (s *keySpec) define(fs *flag.FlagSet) {
	fs.Var(&s.scopes, "scope", "a `SCOPE` of the key: "+strings.Join(auth.ScopeNames(), ", ")+" (repeat for several)")
	fs.Var(&s.models, "model", "a model `PATTERN` the key may use, as in auth.keys (repeat for several; \"*\" for all)")
	fs.StringVar(&s.team, "team", "", "the `TEAM` the key belongs to (one of the config's teams; \"\" for none)")
	fs.Var(&s.budgets, "budget", "a `BUDGET` as in the config file, '{window: day, max_cost_usd: 5}' (repeat for several; \"none\" for none)")
	fs.StringVar(&s.expires, "expires", "", "when the key stops working: a `TIME` (RFC 3339), a duration from now (720h), or \"never\"")
	fs.Float64Var(&s.rps, "rps", 0, "the key's requests per second (`RATE`; 0: unlimited)")
	fs.IntVar(&s.burst, "burst", 0, "the key's burst above its rate (`N`; needs --rps; 0: the rate rounded up)")
	fs.IntVar(&s.maxStreams, "max-streams", 0, "the key's Generate calls at once (`N`; 0: unlimited)")
	fs.Var(&s.metadata, "metadata", "a label `KEY=VALUE` of the key (repeat for several; \"none\" for none)")
}

// key builds the key the flags describe, and the fields they set (the
// update mask).
func (s *keySpec) key(cmd string, fs *flag.FlagSet, now time.Time) (*adminv1.Key, []string, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	k := &adminv1.Key{Name: s.name, Scopes: s.scopes, Models: s.models, Team: s.team}
	var fields []string
	add := func(flagName, field string) {
		if given[flagName] && !slices.Contains(fields, field) {
			fields = append(fields, field)
		}
	}
	add("scope", "scopes")
	add("model", "models")
	add("team", "team")
	add("budget", "budgets")
	add("expires", "expires_at")
	add("rps", "limits")
	add("burst", "limits")
	add("max-streams", "limits")
	add("metadata", "metadata")
	for _, l := range []struct {
		flag string
		list []string
	}{{"budget", s.budgets}, {"metadata", s.metadata}} {
		if len(l.list) > 1 && slices.Contains(l.list, "none") {
			return nil, nil, usagef(cmd, "%s: --%s none clears the list: give it alone, not with other --%s flags", cmd, l.flag, l.flag)
		}
	}
	if !(len(s.budgets) == 1 && s.budgets[0] == "none") {
		for i, raw := range s.budgets {
			b, err := config.ParseBudget(raw)
			if err != nil {
				return nil, nil, usagef(cmd, "%s: --budget %q (#%d): %v; write it as '{window: day, max_cost_usd: 5}'", cmd, raw, i+1, err)
			}
			// A negative token cap has no place in the request's uint64:
			// sent as 0, it was no cap at all beside a cost cap.
			if b.MaxTokens < 0 {
				return nil, nil, usagef(cmd, "%s: --budget %q (#%d): max_tokens must not be negative", cmd, raw, i+1)
			}
			k.Budgets = append(k.Budgets, &adminv1.Budget{Window: string(b.Window), MaxCostUsd: b.MaxCostUSD, MaxTokens: uint64(b.MaxTokens)})
		}
	}
	if !(len(s.metadata) == 1 && s.metadata[0] == "none") && len(s.metadata) > 0 {
		k.Metadata = map[string]string{}
		for _, kv := range s.metadata {
			name, v, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				return nil, nil, usagef(cmd, "%s: --metadata %q: want KEY=VALUE", cmd, kv)
			}
			if old, dup := k.Metadata[name]; dup {
				return nil, nil, usagef(cmd, "%s: --metadata %q: the label %s is already given (%s=%s): give each label once", cmd, kv, name, name, old)
			}
			k.Metadata[name] = v
		}
	}
	switch e := s.expires; {
	case e == "" || e == "never":
	default:
		if d, err := time.ParseDuration(e); err == nil {
			k.ExpiresAt = timestamppb.New(now.Add(d))
		} else if t, err := time.Parse(time.RFC3339, e); err == nil {
			k.ExpiresAt = timestamppb.New(t)
		} else {
			return nil, nil, usagef(cmd, "%s: --expires %q: want an RFC 3339 time (2026-01-31T00:00:00Z), a duration (720h) or never", cmd, e)
		}
	}
	if s.rps < 0 || s.burst < 0 || s.maxStreams < 0 {
		return nil, nil, usagef(cmd, "%s: --rps, --burst and --max-streams must not be negative", cmd)
	}
	// A rate that is no number (NaN, Inf) and counts past uint32 go to the
	// server as they are, or as the largest uint32, for it to refuse: they
	// once cleared the limits and wrapped (--max-streams 4294967297 was 1).
	if s.rps != 0 || s.burst > 0 || s.maxStreams > 0 {
		k.Limits = &adminv1.KeyLimits{RequestsPerSecond: s.rps, Burst: uint32(min(s.burst, math.MaxUint32)), MaxConcurrentStreams: uint32(min(s.maxStreams, math.MaxUint32))}
	}
	return k, fields, nil
}

// oneName returns the one argument a command takes: a key's name.
func oneName(cmd string, args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", usagef(cmd, "%s: name the key: llmrelay %s NAME", cmd, cmd)
	case 1:
		return args[0], nil
	}
	return "", usagef(cmd, "%s: unexpected argument %q (it takes one key name)", cmd, args[1])
}

var keysCreate = &command{
	name:    "keys create",
	usage:   "keys create NAME [flags]",
	summary: "create a key and print its secret, once",
	about: `Creates an API key in the server's state store and prints its secret on
stdout: the only time anyone sees it (the server keeps its hash). Store it
now; a lost secret is replaced by revoking the key and creating another.

  llmrelay keys create ci --scope generate --model 'mock/*' \
      --budget '{window: day, max_cost_usd: 5}'`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var af callFlags
		var spec keySpec
		af.define(fs)
		spec.define(fs)
		return func(ctx context.Context, args []string) error {
			name, err := oneName("keys create", args)
			if err != nil {
				return err
			}
			spec.name = name
			k, _, err := spec.key("keys create", fs, time.Now())
			if err != nil {
				return err
			}
			return runAdmin(&af, "keys create", env, func(c *adminConn) (*adminv1.CreateKeyResponse, error) {
				return c.keys.CreateKey(ctx, &adminv1.CreateKeyRequest{Key: k})
			}, func(resp *adminv1.CreateKeyResponse) {
				fmt.Fprintln(env.Stdout, resp.GetSecret())
				fmt.Fprintf(env.Stderr, "created API key %s; its secret (above) is shown this once\n", resp.GetKey().GetName())
			})
		}
	},
}

var keysList = &command{
	name:    "keys list",
	usage:   "keys list [flags]",
	summary: "list the keys, config and stored",
	about:   `Lists the server's API keys by name: the config's (source config) and the stored ones (source store), with their state, team, scopes and budgets. Revoked keys are listed with --revoked.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var af callFlags
		af.define(fs)
		revoked := fs.Bool("revoked", false, "list revoked keys too")
		team := fs.String("team", "", "list only the keys of `TEAM`")
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("keys list", "keys list: unexpected argument %q (it takes only flags)", args[0])
			}
			c, err := dialAdmin(&af, "keys list", env)
			if err != nil {
				return err
			}
			defer c.client.Close()
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			if !af.json {
				fmt.Fprintln(tw, "NAME\tSOURCE\tSTATE\tTEAM\tSCOPES\tBUDGETS\tEXPIRES")
			}
			req := &adminv1.ListKeysRequest{ShowRevoked: *revoked, Team: *team}
			listed := 0
			for {
				resp, err := c.keys.ListKeys(ctx, req)
				if err != nil {
					return callError(c.addr, err)
				}
				for _, k := range resp.GetKeys() {
					listed++
					if af.json {
						if err := printJSONLine(env.Stdout, k); err != nil {
							return err
						}
						continue
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.GetName(), sourceName(k.GetSource()), stateName(k.GetState()),
						dash(k.GetTeam()), strings.Join(k.GetScopes(), ","), dash(budgetsLine(k.GetBudgets())), expiresLine(k))
				}
				if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
					break
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if listed == 0 && *team != "" && !af.json {
				// An answer all the same (exit 0), but say so, as tools does.
				note := fmt.Sprintf("llmrelay: no key of team %q", *team)
				if !*revoked {
					note += " (keys list --revoked lists revoked keys too)"
				}
				fmt.Fprintln(env.Stderr, note)
			}
			return nil
		}
	},
}

var keysGet = &command{
	name:    "keys get",
	usage:   "keys get NAME [flags]",
	summary: "show a key and its budgets' spend",
	about:   `Shows one API key, config or stored: its scopes, models, limits, team, expiry, metadata, and each of its own budgets with what its current window spent.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var af callFlags
		af.define(fs)
		return func(ctx context.Context, args []string) error {
			name, err := oneName("keys get", args)
			if err != nil {
				return err
			}
			return runAdmin(&af, "keys get", env, func(c *adminConn) (*adminv1.Key, error) {
				resp, err := c.keys.GetKey(ctx, &adminv1.GetKeyRequest{Name: name})
				return resp.GetKey(), err
			}, func(k *adminv1.Key) { printKey(env.Stdout, k) })
		}
	},
}

var keysUpdate = &command{
	name:    "keys update",
	usage:   "keys update NAME [flags]",
	summary: "change a stored key's scopes, models, limits, team, budgets, expiry or metadata",
	about: `Changes what the flags given say of a stored key, and nothing else; every
replica sees the change within a second. A repeated flag (--scope, --model,
--budget, --metadata) replaces the whole list; "--budget none" and
"--metadata none" clear it, "--team ''" takes the key out of its team,
"--expires never" keeps it from expiring. Any of --rps, --burst and
--max-streams sets all three (the others to 0, unlimited); --burst needs
--rps.

  llmrelay keys update ci --budget '{window: day, max_cost_usd: 10}'`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var af callFlags
		var spec keySpec
		af.define(fs)
		spec.define(fs)
		return func(ctx context.Context, args []string) error {
			name, err := oneName("keys update", args)
			if err != nil {
				return err
			}
			spec.name = name
			k, fields, err := spec.key("keys update", fs, time.Now())
			if err != nil {
				return err
			}
			if len(fields) == 0 {
				return usagef("keys update", "keys update: nothing to change: give the flags of what changes (--scope, --model, --team, --budget, --expires, --rps, --burst, --max-streams, --metadata)")
			}
			return runAdmin(&af, "keys update", env, func(c *adminConn) (*adminv1.Key, error) {
				resp, err := c.keys.UpdateKey(ctx, &adminv1.UpdateKeyRequest{Key: k, UpdateMask: &fieldmaskpb.FieldMask{Paths: fields}})
				return resp.GetKey(), err
			}, func(k *adminv1.Key) { printKey(env.Stdout, k) })
		}
	},
}

var keysRevoke = &command{
	name:    "keys revoke",
	usage:   "keys revoke NAME [flags]",
	summary: "revoke a stored key for good",
	about:   `Revokes a stored API key: every replica refuses it within a second (API_KEY_REVOKED). Calls already running finish. The key stays listed (keys list --revoked) with its usage.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var af callFlags
		af.define(fs)
		return func(ctx context.Context, args []string) error {
			name, err := oneName("keys revoke", args)
			if err != nil {
				return err
			}
			return runAdmin(&af, "keys revoke", env, func(c *adminConn) (*adminv1.Key, error) {
				resp, err := c.keys.RevokeKey(ctx, &adminv1.RevokeKeyRequest{Name: name})
				return resp.GetKey(), err
			}, func(k *adminv1.Key) { fmt.Fprintf(env.Stdout, "revoked API key %s\n", k.GetName()) })
		}
	},
}

var keysUsage = &command{
	name:    "keys usage",
	usage:   "keys usage [flags]",
	summary: "print the calls, tokens and cost per key and team per day",
	about: `Prints what each key and each team used per UTC day (GetUsage): calls, input,
output, reasoning and cached input tokens, and cost at the server's prices.
Every admitted call counts, with the tokens of all its attempts. Needs a key
with the admin or usage.read scope.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var af callFlags
		af.define(fs)
		from := fs.String("from", "", "the first `DAY` (YYYY-MM-DD, UTC; default today)")
		to := fs.String("to", "", "the last `DAY` (default --from)")
		key := fs.String("for-key", "", "only the records of the key `NAME`")
		team := fs.String("team", "", "only the records of `TEAM`")
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("keys usage", "keys usage: unexpected argument %q (it takes only flags)", args[0])
			}
			return runAdmin(&af, "keys usage", env, func(c *adminConn) (*adminv1.GetUsageResponse, error) {
				return c.usage.GetUsage(ctx, &adminv1.GetUsageRequest{StartDay: *from, EndDay: *to, Key: *key, Team: *team})
			}, func(resp *adminv1.GetUsageResponse) {
				printUsage(env.Stdout, resp)
				if len(resp.GetRecords()) == 0 {
					fmt.Fprintln(env.Stderr, "llmrelay: "+noUsage(*key, *team)+oneDayHint(*from, *to, time.Now()))
				}
			})
		}
	},
}

var keysTeams = &command{
	name:    "keys teams",
	usage:   "keys teams [flags]",
	summary: "list the teams with their budgets and what the current windows spent",
	about: `Lists the server's configured teams (its config's teams) by name (ListTeams),
a line per budget: its window, what the window's calls spent in US dollars and
in tokens (the calls of all the team's keys), its caps ("-": none) and when it
resets. A team without a budget is listed on one line of dashes. A team that
only stored keys name (a reload dropped it) is not listed; keys usage --team
still reads its usage. --json prints one team a line. Needs a key with the
admin scope.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var af callFlags
		af.define(fs)
		team := fs.String("team", "", "only the team `TEAM`")
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("keys teams", "keys teams: unexpected argument %q (it takes only flags; --team TEAM for one team)", args[0])
			}
			c, err := dialAdmin(&af, "keys teams", env)
			if err != nil {
				return err
			}
			defer c.client.Close()
			resp, err := c.keys.ListTeams(ctx, &adminv1.ListTeamsRequest{Name: *team})
			if err != nil {
				return callError(c.addr, err)
			}
			if af.json {
				for _, t := range resp.GetTeams() {
					if err := printJSONLine(env.Stdout, t); err != nil {
						return err
					}
				}
				return nil
			}
			if err := printTeams(env.Stdout, resp.GetTeams()); err != nil {
				return err
			}
			switch {
			case len(resp.GetTeams()) > 0:
			case *team != "":
				// An answer all the same (exit 0), but say so, as keys list does.
				fmt.Fprintf(env.Stderr, "llmrelay: no team %q among the server's teams (keys teams lists them)\n", *team)
			default:
				fmt.Fprintln(env.Stderr, "llmrelay: the server has no team (teams: [{name: ..., budgets: [...]}] in its config)")
			}
			return nil
		}
	},
}

// printTeams prints teams, a line per budget (one of dashes for a team
// without any): what its window spent beside its caps.
func printTeams(w io.Writer, teams []*adminv1.Team) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEAM\tWINDOW\tSPENT_USD\tMAX_USD\tSPENT_TOKENS\tMAX_TOKENS\tRESETS")
	for _, t := range teams {
		if len(t.GetBudgets()) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\n", t.GetName())
		}
		for _, b := range t.GetBudgets() {
			maxUSD, maxTokens, resets := "-", "-", "never"
			if b.GetMaxCostUsd() > 0 {
				maxUSD = usd(b.GetMaxCostUsd())
			}
			if b.GetMaxTokens() > 0 {
				maxTokens = strconv.FormatUint(b.GetMaxTokens(), 10)
			}
			if b.GetResetsAt() != nil {
				resets = b.GetResetsAt().AsTime().UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", t.GetName(), b.GetWindow(), usd(b.GetSpentCostUsd()), maxUSD, b.GetSpentTokens(), maxTokens, resets)
		}
	}
	return tw.Flush()
}

// printUsage prints GetUsage's records, a line each.
func printUsage(w io.Writer, resp *adminv1.GetUsageResponse) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DAY\tKEY\tTEAM\tCALLS\tINPUT\tOUTPUT\tREASONING\tCACHED\tCOST_USD")
	for _, r := range resp.GetRecords() {
		u := r.GetUsage()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", r.GetDay(), dash(r.GetKey()), dash(r.GetTeam()), r.GetCalls(),
			u.GetInputTokens(), u.GetOutputTokens(), u.GetReasoningTokens(), u.GetCachedInputTokens(), strconv.FormatFloat(r.GetCostUsd(), 'f', -1, 64))
	}
	tw.Flush()
}

// noUsage says why GetUsage found no record of the key and team asked
// for (either may be ""): not an error, but worth a word when a name may
// be mistyped.
func noUsage(key, team string) string {
	switch {
	case key != "" && team != "":
		return fmt.Sprintf("no usage of key %q or team %q on the days asked", key, team)
	case key != "":
		return fmt.Sprintf("no usage of key %q on the days asked: no call of that key", key)
	case team != "":
		return fmt.Sprintf("no usage of team %q on the days asked: no call of a key of that team (keys list --team %s lists its keys)", team, team)
	}
	return "no usage on the days asked: no call was admitted"
}

// oneDayHint is what an empty keys usage adds when it was asked for one
// past day by --from alone, which reads as "since": --to defaults to
// --from, so it says how to ask for the days since.
func oneDayHint(from, to string, now time.Time) string {
	today := now.UTC().Format(time.DateOnly)
	if from == "" || to != "" || from >= today {
		return ""
	}
	return fmt.Sprintf("; --to defaults to --from, so only %s was asked: add --to %s for the days since", from, today)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sourceName(s adminv1.KeySource) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "KEY_SOURCE_"))
}

func stateName(s adminv1.KeyState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "KEY_STATE_"))
}

// budgetsLine writes budgets as "day $0.0018/$5, month 1300/2000000 tokens".
func budgetsLine(budgets []*adminv1.Budget) string {
	var parts []string
	for _, b := range budgets {
		var caps []string
		if b.GetMaxCostUsd() > 0 {
			caps = append(caps, "$"+usd(b.GetSpentCostUsd())+"/$"+usd(b.GetMaxCostUsd()))
		}
		if b.GetMaxTokens() > 0 {
			caps = append(caps, fmt.Sprintf("%d/%d tokens", b.GetSpentTokens(), b.GetMaxTokens()))
		}
		parts = append(parts, b.GetWindow()+" "+strings.Join(caps, " "))
	}
	return strings.Join(parts, ", ")
}

func usd(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func expiresLine(k *adminv1.Key) string {
	if k.GetExpiresAt() == nil {
		return "never"
	}
	return k.GetExpiresAt().AsTime().UTC().Format(time.RFC3339)
}

// limitsLine says a key's limits in words: a limit of 0 is none, not a
// limit of nothing ("0 streams" read as a key that may run none), and a
// burst of 0 is the rate's own (KeyLimits).
func limitsLine(l *adminv1.KeyLimits) string {
	rate := "no rate limit"
	if rps := l.GetRequestsPerSecond(); rps != 0 {
		rate = usd(rps) + " requests/s"
		if b := l.GetBurst(); b > 0 {
			rate += fmt.Sprintf(", burst %d", b)
		}
	}
	streams := "no stream limit"
	if n := l.GetMaxConcurrentStreams(); n > 0 {
		streams = fmt.Sprintf("%d streams at once", n)
	}
	return rate + ", " + streams
}

// printKey prints one key, a field a line.
func printKey(w io.Writer, k *adminv1.Key) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	line := func(name, v string) { fmt.Fprintf(tw, "%s:\t%s\n", name, v) }
	line("name", k.GetName())
	line("source", sourceName(k.GetSource()))
	line("state", stateName(k.GetState()))
	line("scopes", strings.Join(k.GetScopes(), ", "))
	line("models", dash(strings.Join(k.GetModels(), ", ")))
	line("team", dash(k.GetTeam()))
	if l := k.GetLimits(); l != nil {
		line("limits", limitsLine(l))
	}
	for _, b := range k.GetBudgets() {
		v := budgetsLine([]*adminv1.Budget{b})
		if b.GetResetsAt() != nil {
			v += " (resets " + b.GetResetsAt().AsTime().UTC().Format(time.RFC3339) + ")"
		}
		line("budget", v)
	}
	line("expires", expiresLine(k))
	for _, name := range slices.Sorted(maps.Keys(k.GetMetadata())) {
		line("metadata", name+"="+k.GetMetadata()[name])
	}
	if k.GetCreatedBy() != "" {
		line("created by", k.GetCreatedBy())
	}
	tw.Flush()
}
