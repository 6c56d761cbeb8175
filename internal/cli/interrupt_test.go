package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// runMainEnv, set to 1, makes the test binary run Main instead of the
// tests: a test starts it as a child process to send it signals.
const runMainEnv = "LLMRELAY_CLI_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// TestGenerateCtrlC runs `llmrelay generate` as a process against a model
// that holds its reply after the first word, and sends it SIGINT once
// that word is on stdout: the process ends the line, says on stderr that
// the call was interrupted and exits 130. An ordinary call is cancelled
// on the server, which closes its upstream request; a resumable one runs
// on, and the request id and event the line gives pick it up with Resume.
func TestGenerateCtrlC(t *testing.T) {
	tests := []struct {
		name      string
		resumable bool
	}{
		{name: "an ordinary call is cancelled"},
		{name: "a resumable call runs on and the line says how to resume it", resumable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := make(chan struct{})
			gone := make(chan struct{}, 1)
			up := openaitest.NewServer(openaitest.Options{Chunks: 3, Gate: gate, ClientGone: func(int, bool) {
				select {
				case gone <- struct{}{}:
				default:
				}
			}})
			t.Cleanup(up.Close)
			cfg := config.Default()
			cfg.MetricsListen = ""
			cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"m"}}}
			addr, _ := servertest.Listen(t, cfg)
			var once bool
			release := func() {
				if !once {
					once = true
					close(gate)
				}
			}
			t.Cleanup(release) // before the server's shutdown, which waits for the call

			args := []string{"generate", "-m", "up/m", "hi"}
			if tt.resumable {
				args = append(args, "--resumable")
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = []string{runMainEnv + "=1", EnvAddr + "=" + addr}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
			})

			// The first word is shown: the call streams, and the rest is
			// held.
			first := make([]byte, len(openaitest.Word(0)))
			if _, err := io.ReadFull(stdout, first); err != nil || string(first) != openaitest.Word(0) {
				cmd.Wait()
				t.Fatalf("stdout began %q (%v), want %q; stderr:\n%s", first, err, openaitest.Word(0), stderr.String())
			}
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(stdout)
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted {
				t.Fatalf("the process ended with %v, want exit status %d; stderr:\n%s", err, ExitInterrupted, stderr.String())
			}
			if got := string(first) + string(rest); got != openaitest.Word(0)+"\n" {
				t.Errorf("stdout %q, want the first word and the end of its line", got)
			}

			if !tt.resumable {
				if got, want := stderr.String(), "llmrelay: interrupted: the call was cancelled\n"; got != want {
					t.Errorf("stderr %q, want %q", got, want)
				}
				select {
				case <-gone:
				case <-time.After(time.Minute):
					t.Fatal("the upstream request is still open a minute after the interrupt: the server did not cancel the call")
				}
				return
			}
			m := regexp.MustCompile(`^llmrelay: interrupted: the resumable call runs on for the server's resume.grace \(60s by default\): Resume picks it up with request id (\S+) after event (\d+) \(docs/resume.md\)\n$`).FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("stderr does not say how to resume the call:\n%q", stderr.String())
			}
			after, _ := strconv.ParseUint(m[2], 10, 64)
			release()
			c, err := client.New(addr, client.WithInsecure())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := c.Resume(t.Context(), m[1], after)
			if err != nil {
				t.Fatal(err)
			}
			var resumed strings.Builder
			final, err := client.Collect(s, &client.Hooks{OnDelta: func(d *llmrelayv1.Delta) { resumed.WriteString(d.GetText()) }})
			if err != nil {
				t.Fatalf("Resume %s after %d: %v", m[1], after, err)
			}
			whole := openaitest.Word(0) + openaitest.Word(1) + openaitest.Word(2)
			if got := string(first) + resumed.String(); got != whole || final.GetMessage().GetContent() != whole {
				t.Errorf("what was shown and then resumed: %q (final %q), want %q", got, final.GetMessage().GetContent(), whole)
			}
		})
	}
}
