package cli

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/llmrelay/llmrelay/client"
	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// TestKeysAgainstARunningServer runs `llmrelay keys` create, list, get,
// update, usage and revoke against a server on loopback TCP, with its
// admin key in LLMRELAY_API_KEY; the key created works until it is
// revoked.
func TestKeysAgainstARunningServer(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = []config.APIKey{{Name: "ops", SHA256: auth.HashKey("ops-secret"), Scopes: []string{"admin"}}}
	cfg.Teams = []spend.Team{{Name: "research"}}
	addr, _ := servertest.Listen(t, cfg)
	env := map[string]string{EnvAddr: addr, EnvAPIKey: "ops-secret"}
	run := func(args ...string) result {
		t.Helper()
		r := runCLI(t.Context(), t, args, env, "")
		if r.code != ExitOK {
			t.Fatalf("llmrelay %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}

	created := run("keys", "create", "ci", "--scope", "generate", "--model", "mock/*", "--team", "research",
		"--budget", "{window: day, max_cost_usd: 5}", "--budget", "{window: month, max_tokens: 2000000}", "--metadata", "owner=qa")
	secret := strings.TrimSpace(created.stdout)
	if !strings.HasPrefix(secret, "llmr_") || !strings.Contains(created.stderr, "created API key ci") {
		t.Fatalf("keys create printed %q and %q", created.stdout, created.stderr)
	}
	list := run("keys", "list").stdout
	for _, want := range []string{
		"NAME  SOURCE  STATE   TEAM      SCOPES    BUDGETS",
		"ci    store   active  research  generate  day $0/$5, month 0/2000000 tokens  never",
		"ops   config  active  -         admin     -",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("keys list lacks %q:\n%s", want, list)
		}
	}
	got := run("keys", "get", "ci").stdout
	for _, want := range []string{"source:     store", "models:     mock/*", "budget:     day $0/$5 (resets ", "metadata:   owner=qa", "created by: ops"} {
		if !strings.Contains(got, want) {
			t.Errorf("keys get lacks %q:\n%s", want, got)
		}
	}
	// A limit of 0 is none, shown so: "0 streams" read as none allowed.
	updated := run("keys", "update", "ci", "--budget", "none", "--rps", "5").stdout
	if strings.Contains(updated, "budget:") || !strings.Contains(updated, "limits:     5 requests/s, no stream limit\n") || !strings.Contains(updated, "team:       research") {
		t.Errorf("keys update: %s", updated)
	}
	if updated := run("keys", "update", "ci", "--rps", "2.5", "--burst", "4", "--max-streams", "3").stdout; !strings.Contains(updated, "limits:     2.5 requests/s, burst 4, 3 streams at once\n") {
		t.Errorf("keys update with every limit: %s", updated)
	}
	if updated := run("keys", "update", "ci", "--max-streams", "3").stdout; !strings.Contains(updated, "limits:     no rate limit, 3 streams at once\n") {
		t.Errorf("keys update with a stream limit only: %s", updated)
	}

	// The new key calls the server, and its call shows in the usage.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := llmrelayv1.NewLLMServiceClient(conn).Generate(metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+secret),
		&llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "two words"}}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("a call with the new key: %v", err)
		}
	}
	usage := run("keys", "usage", "--for-key", "ci").stdout
	lines := strings.Split(strings.TrimSpace(usage), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "DAY") || !strings.Contains(lines[1], " ci   -     1      2      2") {
		t.Errorf("keys usage:\n%s", usage)
	}

	if out := run("keys", "revoke", "ci").stdout; out != "revoked API key ci\n" {
		t.Errorf("keys revoke printed %q", out)
	}
	if list := run("keys", "list", "--revoked").stdout; !strings.Contains(list, "ci    store   revoked") {
		t.Errorf("keys list --revoked:\n%s", list)
	}
	if list := run("keys", "list").stdout; strings.Contains(list, "ci ") {
		t.Errorf("keys list shows a revoked key:\n%s", list)
	}

	// Errors name the code and reason; the wrong key is refused.
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"keys", "revoke", "ops"}, env, "FAILED_PRECONDITION KEY_READ_ONLY: config keys are read-only"},
		{[]string{"keys", "get", "nobody"}, env, "NOT_FOUND KEY_NOT_FOUND"},
		{[]string{"keys", "list"}, map[string]string{EnvAddr: addr, EnvAPIKey: secret}, "UNAUTHENTICATED API_KEY_REVOKED"},
		{[]string{"keys", "create", "x", "--scope", "admin", "--team", "nope"}, env, `INVALID_ARGUMENT INVALID_REQUEST: key.team: "nope" is not a configured team`},
		{[]string{"keys", "create", "x", "--scope", "admin", "--max-streams", "4294967297"}, env, "INVALID_ARGUMENT INVALID_REQUEST: validation error: key.limits.max_concurrent_streams: must be less than or equal to 1000000"},
		{[]string{"keys", "create", "y", "--scope", "admin", "--rps", "NaN"}, env, "INVALID_ARGUMENT INVALID_REQUEST: validation error: key.limits.requests_per_second: must be greater than or equal to 0"},
		{[]string{"keys", "create", "w", "--scope", "admin", "--burst", "5"}, env, "INVALID_ARGUMENT INVALID_REQUEST: key.limits.burst: is set without requests_per_second"},
		{[]string{"keys", "create", "z", "--scope", "generate", "--scope", "generate", "--model", "*"}, env, `INVALID_ARGUMENT INVALID_REQUEST: key.scopes[1]: "generate" is listed twice (also scopes[0]): list each once`},
	} {
		r := runCLI(t.Context(), t, tc.args, tc.env, "")
		if r.code != ExitFailed || !strings.Contains(r.stderr, addr+": "+tc.want) {
			t.Errorf("llmrelay %s: exit %d, %q; want exit 1 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}

// TestKeysBudgetWithANegativeTokenCap: a --budget whose max_tokens is
// negative is a usage error, sent nowhere. It went to the server as 0, so
// that {window: day, max_cost_usd: 5, max_tokens: -100} made or left a key
// with a cost cap and no token cap, and exit 0.
func TestKeysBudgetWithANegativeTokenCap(t *testing.T) {
	env := map[string]string{EnvAddr: "127.0.0.1:1", EnvAPIKey: "ops-secret"}
	for _, args := range [][]string{
		{"keys", "create", "ci", "--scope", "generate", "--model", "*", "--budget", "{window: day, max_cost_usd: 5, max_tokens: -100}"},
		{"keys", "update", "ci", "--budget", "{window: month, max_tokens: 5}", "--budget", "{window: day, max_cost_usd: 5, max_tokens: -100}"},
	} {
		r := runCLI(t.Context(), t, args, env, "")
		if r.code != ExitUsage || !strings.Contains(r.stderr, `(#`) || !strings.Contains(r.stderr, "max_tokens must not be negative") {
			t.Errorf("llmrelay %s: exit %d, %q; want exit 2 and max_tokens must not be negative", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// TestKeysBudgetWithAFractionalTokenCap: a --budget's max_tokens is a
// whole number, as in the config file. {max_tokens: 1.5} went to the
// server as 1, and {max_tokens: 0.5} as no token cap at all.
func TestKeysBudgetWithAFractionalTokenCap(t *testing.T) {
	env := map[string]string{EnvAddr: "127.0.0.1:1", EnvAPIKey: "ops-secret"}
	for _, args := range [][]string{
		{"keys", "create", "ci", "--scope", "generate", "--model", "*", "--budget", "{window: day, max_tokens: 1.5}"},
		{"keys", "update", "ci", "--budget", "{window: day, max_cost_usd: 5, max_tokens: 0.5}"},
	} {
		r := runCLI(t.Context(), t, args, env, "")
		if r.code != ExitUsage || !strings.Contains(r.stderr, `(#1): max_tokens: want a whole number, not "`) {
			t.Errorf("llmrelay %s: exit %d, %q; want exit 2 and max_tokens: want a whole number", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// TestKeysNoneWithOtherValues: "none", which clears --budget's or
// --metadata's list, given with other values of the flag is a usage error
// that says so. It was parsed as a budget ("want a section of settings
// ..., not \"none\"") or as a label ("want KEY=VALUE").
// A label given twice is a usage error too: the last value was kept.
func TestKeysNoneWithOtherValues(t *testing.T) {
	env := map[string]string{EnvAddr: "127.0.0.1:1", EnvAPIKey: "ops-secret"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "update", "ci", "--budget", "none", "--budget", "{window: day, max_tokens: 5}"},
			"llmrelay: keys update: --budget none clears the list: give it alone, not with other --budget flags\n"},
		{[]string{"keys", "create", "ci", "--scope", "generate", "--model", "*", "--budget", "{window: day, max_tokens: 5}", "--budget", "none"},
			"llmrelay: keys create: --budget none clears the list: give it alone, not with other --budget flags\n"},
		{[]string{"keys", "update", "ci", "--metadata", "owner=me", "--metadata", "none"},
			"llmrelay: keys update: --metadata none clears the list: give it alone, not with other --metadata flags\n"},
		{[]string{"keys", "create", "ci", "--scope", "admin", "--metadata", "owner=me", "--metadata", "owner=you"},
			"llmrelay: keys create: --metadata \"owner=you\": the label owner is already given (owner=me): give each label once\n"},
	} {
		r := runCLI(t.Context(), t, tc.args, env, "")
		if first, _, _ := strings.Cut(r.stderr, "Run "); r.code != ExitUsage || first != tc.want {
			t.Errorf("llmrelay %s: exit %d, %q; want exit 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}

// TestKeysListAndUsageSayWhenNothingMatches: `keys list --team` and `keys
// usage` that find nothing still succeed (an empty answer is an answer),
// but say on stderr that nothing matched, as `tools` does, instead of an
// empty table alone, and --from alone, which asks for that one day, says
// how to ask for the days since; --json prints the answer only.
func TestKeysListAndUsageSayWhenNothingMatches(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = []config.APIKey{{Name: "ops", SHA256: auth.HashKey("ops-secret"), Scopes: []string{"admin"}, Team: "research"}}
	cfg.Teams = []spend.Team{{Name: "research"}}
	addr, _ := servertest.Listen(t, cfg)
	env := map[string]string{EnvAddr: addr, EnvAPIKey: "ops-secret"}
	for _, tc := range []struct {
		name       string
		args       []string
		wantStdout string // a line of it
		wantStderr string // "" for none
	}{
		{"list of a team with no key", []string{"keys", "list", "--team", "nope"},
			"NAME  SOURCE  STATE  TEAM  SCOPES  BUDGETS  EXPIRES", `llmrelay: no key of team "nope" (keys list --revoked lists revoked keys too)` + "\n"},
		{"list of a team with no key, revoked ones too", []string{"keys", "list", "--team", "nope", "--revoked"},
			"NAME  SOURCE  STATE  TEAM  SCOPES  BUDGETS  EXPIRES", `llmrelay: no key of team "nope"` + "\n"},
		{"list of a team with a key", []string{"keys", "list", "--team", "research"}, "ops   config  active  research  admin", ""},
		{"list of a team with no key, as JSON", []string{"keys", "list", "--team", "nope", "--json"}, "", ""},
		{"usage of a team with no record", []string{"keys", "usage", "--team", "nope"},
			"DAY  KEY  TEAM  CALLS", `llmrelay: no usage of team "nope" on the days asked: no call of a key of that team (keys list --team nope lists its keys)` + "\n"},
		{"usage of a key with no record", []string{"keys", "usage", "--for-key", "nobody", "--from", "2026-01-01", "--to", "2026-01-31"},
			"DAY  KEY  TEAM  CALLS", `llmrelay: no usage of key "nobody" on the days asked: no call of that key` + "\n"},
		{"usage of one past day by --from alone", []string{"keys", "usage", "--from", "2026-01-01"},
			"DAY  KEY  TEAM  CALLS", "llmrelay: no usage on the days asked: no call was admitted; --to defaults to --from, so only 2026-01-01 was asked: add --to " +
				time.Now().UTC().Format(time.DateOnly) + " for the days since\n"},
		{"usage of a team with no record, as JSON", []string{"keys", "usage", "--team", "nope", "--json"}, "{}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tc.args, env, "")
			if r.code != ExitOK || !strings.Contains(r.stdout, tc.wantStdout) || r.stderr != tc.wantStderr {
				t.Errorf("exit %d, stdout:\n%s\nstderr: %q\nwant exit 0, %q in stdout and stderr %q", r.code, r.stdout, r.stderr, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

// TestKeysTeams: `keys teams` prints each configured team's budgets, a
// line each, with what the current window spent (the calls of all the
// team's keys) beside its caps, a team without a budget on a line of
// dashes; --team one team, and one it does not know says so on stderr
// (exit 0); --json prints one team a line; it needs the admin scope.
func TestKeysTeams(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.Pricing.Models = map[string]usage.Price{"mock/echo": {"input": 2.5, "output": 10}}
	cfg.Auth.Keys = []config.APIKey{
		{Name: "ops", SHA256: auth.HashKey("ops-secret"), Scopes: []string{"admin"}},
		{Name: "notebook", SHA256: auth.HashKey("notebook-secret"), Scopes: []string{"generate"}, Models: []string{"*"}, Team: "research"},
	}
	cfg.Teams = []spend.Team{
		{Name: "research", Budgets: []spend.Budget{{Window: spend.Month, MaxCostUSD: 200}, {Window: spend.Day, MaxTokens: 2_000_000}}},
		{Name: "idle"},
	}
	addr, _ := servertest.Listen(t, cfg, server.WithGovernanceClock(statetest.NewClock().Now)) // 2025-01-02
	env := map[string]string{EnvAddr: addr, EnvAPIKey: "ops-secret"}

	// A call of 2 input and 2 output tokens: $0.000025.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := llmrelayv1.NewLLMServiceClient(conn).Generate(metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer notebook-secret"),
		&llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "two words"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Collect(stream, nil); err != nil {
		t.Fatalf("a call of the team's key: %v", err)
	}

	for _, tc := range []struct {
		name                   string
		args                   []string
		env                    map[string]string
		code                   int
		wantStdout, wantStderr string
	}{
		{"every team", []string{"keys", "teams"}, env, ExitOK, "" +
			"TEAM      WINDOW  SPENT_USD  MAX_USD  SPENT_TOKENS  MAX_TOKENS  RESETS\n" +
			"idle      -       -          -        -             -           -\n" +
			"research  month   0.000025   200      4             -           2025-02-01T00:00:00Z\n" +
			"research  day     0.000025   -        4             2000000     2025-01-03T00:00:00Z\n", ""},
		{"one team", []string{"keys", "teams", "--team", "idle"}, env, ExitOK, "" +
			"TEAM  WINDOW  SPENT_USD  MAX_USD  SPENT_TOKENS  MAX_TOKENS  RESETS\n" +
			"idle  -       -          -        -             -           -\n", ""},
		{"a team not configured", []string{"keys", "teams", "--team", "nope"}, env, ExitOK,
			"TEAM  WINDOW  SPENT_USD  MAX_USD  SPENT_TOKENS  MAX_TOKENS  RESETS\n",
			`llmrelay: no team "nope" among the server's teams (keys teams lists them)` + "\n"},
		{"a team not configured, as JSON", []string{"keys", "teams", "--team", "nope", "--json"}, env, ExitOK, "", ""},
		{"a key without the admin scope", []string{"keys", "teams"}, map[string]string{EnvAddr: addr, EnvAPIKey: "notebook-secret"}, ExitFailed, "",
			addr + ": PERMISSION_DENIED SCOPE_MISSING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tc.args, tc.env, "")
			if r.code != tc.code || r.stdout != tc.wantStdout || !strings.Contains(r.stderr, tc.wantStderr) || (tc.wantStderr == "") != (r.stderr == "") {
				t.Errorf("llmrelay %s: exit %d, stdout:\n%s\nstderr: %q\nwant exit %d, stdout:\n%s\nstderr with %q",
					strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.code, tc.wantStdout, tc.wantStderr)
			}
		})
	}

	// --json: ListTeams's teams, one a line.
	r := runCLI(t.Context(), t, []string{"keys", "teams", "--json"}, env, "")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != ExitOK || r.stderr != "" || len(lines) != 2 {
		t.Fatalf("keys teams --json: exit %d, stdout:\n%s\nstderr: %q; want two lines", r.code, r.stdout, r.stderr)
	}
	var got []string
	for _, line := range lines {
		var team adminv1.Team
		if err := protojson.Unmarshal([]byte(line), &team); err != nil {
			t.Fatalf("keys teams --json printed %q: %v", line, err)
		}
		got = append(got, team.GetName())
		for _, b := range team.GetBudgets() {
			got = append(got, fmt.Sprintf("%s %v/%v %d/%d %s", b.GetWindow(), b.GetSpentCostUsd(), b.GetMaxCostUsd(), b.GetSpentTokens(), b.GetMaxTokens(),
				b.GetResetsAt().AsTime().Format(time.DateOnly)))
		}
	}
	if want := "[idle research month 2.5e-05/200 4/0 2025-02-01 day 2.5e-05/0 4/2000000 2025-01-03]"; fmt.Sprint(got) != want {
		t.Errorf("keys teams --json: %v, want %s", got, want)
	}
}
