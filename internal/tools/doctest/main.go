// Command doctest runs the code blocks of the documentation that are marked
// runnable and compares what they print with the output the documentation
// shows (make test-docs). How to mark a block, and what is normalised, is in
// docs/testing.md ("Runnable documentation").
//
// It builds llmrelay and grpcurl (at the version go.mod pins) once, and
// starts a server for each Markdown file that needs one: the embedded
// default configuration (the mock provider), or a configuration a block of
// the same file saved, on free loopback ports. Nothing depends on how fast
// the machine is: it waits for the server to say where it listens, and
// bounds each block only by a generous timeout against hangs.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// The addresses the documentation writes; the runner puts the addresses its
// server really listens on in their place, and back again in the output.
const (
	docListen        = "127.0.0.1:50051"
	docMetricsListen = "127.0.0.1:9464"
	docHTTPListen    = "127.0.0.1:8080"
	// docMCP is where the documentation's MCP server listens
	// (@modelcontextprotocol/server-everything; docs/tools.md): the runner
	// starts the pinned one on a free loopback port in its place, before
	// the server of a config that names it.
	docMCP         = "127.0.0.1:3001"
	grpcurlCommand = "go tool grpcurl"
	blockTimeout   = 5 * time.Minute
)

func main() {
	run := flag.String("run", "", "run only the blocks whose FILE:LINE matches this regular expression")
	verbose := flag.Bool("v", false, "print every block's output")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: doctest [-run REGEXP] [-v] FILE.md...\n\nRuns the documentation's blocks marked <!-- test-docs --> (see docs/testing.md).\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var filter *regexp.Regexp
	if *run != "" {
		var err error
		if filter, err = regexp.Compile(*run); err != nil {
			fmt.Fprintf(os.Stderr, "doctest: -run: %v\n", err)
			os.Exit(2)
		}
	}
	ok, err := runAll(flag.Args(), filter, *verbose)
	if err != nil {
		fmt.Fprintf(os.Stderr, "doctest: %v\n", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

type runner struct {
	// mcp is the MCP server the pages share, started on first use.
	mcp     *mcptest.Everything
	mcpErr  error
	repo    string // the repository's root (the working directory)
	tmp     string
	bin     string // llmrelay and grpcurl
	verbose bool
	passed  int
	failed  int
}

func runAll(files []string, filter *regexp.Regexp, verbose bool) (bool, error) {
	// Parse everything first, so a malformed marker fails before any build.
	perFile := map[string][]*block{}
	total := 0
	for _, f := range files {
		blocks, err := parseFile(f)
		if err != nil {
			return false, err
		}
		perFile[f] = blocks
		for _, b := range blocks {
			if b.saveAs == "" {
				total++
			}
		}
	}
	repo, err := os.Getwd()
	if err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp("", "llmrelay-doctest-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	r := &runner{repo: repo, tmp: tmp, bin: filepath.Join(tmp, "bin"), verbose: verbose}
	defer func() {
		if r.mcp != nil {
			r.mcp.Kill()
		}
	}()

	fmt.Printf("== building llmrelay and grpcurl (%d runnable blocks in %d files)\n", total, len(files))
	for _, build := range [][]string{
		{"build", "-o", filepath.Join(r.bin, "llmrelay"), "./cmd/llmrelay"},
		{"build", "-o", filepath.Join(r.bin, "grpcurl"), "github.com/fullstorydev/grpcurl/cmd/grpcurl"},
	} {
		cmd := exec.Command("go", build...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return false, fmt.Errorf("go %s: %v", strings.Join(build, " "), err)
		}
	}
	for _, f := range files {
		if err := r.runFile(f, perFile[f], filter); err != nil {
			return false, err
		}
	}
	fmt.Printf("test-docs: %d passed, %d failed\n", r.passed, r.failed)
	return r.failed == 0, nil
}

// runFile runs one file's blocks in order, in a work directory of its own
// (with bin/llmrelay in it, as `make build` leaves it), and stops the
// servers it started.
func (r *runner) runFile(file string, blocks []*block, filter *regexp.Regexp) error {
	if len(blocks) == 0 {
		return nil
	}
	work := filepath.Join(r.tmp, "work", strings.NewReplacer("/", "_", ".", "_").Replace(file))
	if err := os.MkdirAll(filepath.Join(work, "bin"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(filepath.Join(r.bin, "llmrelay"), filepath.Join(work, "bin", "llmrelay")); err != nil {
		return err
	}
	// The deployment files, at the path the pages name from the
	// repository's root (deploy/kubernetes/configmap.yaml).
	if err := os.Symlink(filepath.Join(r.repo, "deploy"), filepath.Join(work, "deploy")); err != nil {
		return err
	}
	servers := map[string]*server{}
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		if b.saveAs != "" {
			// Saved files are written whatever -run says: later blocks need
			// them. One that names the documented addresses (a program, say)
			// gets the default server's.
			code := b.code
			if strings.Contains(code, docMCP) {
				addr, err := r.mcpAddr()
				if err != nil {
					r.fail(where, fmt.Sprintf("could not start the MCP server: %v", err), "")
					continue
				}
				code = strings.ReplaceAll(code, docMCP, addr)
			}
			if strings.Contains(code, docListen) || strings.Contains(code, docMetricsListen) || strings.Contains(code, docHTTPListen) {
				s, err := r.server(servers, work, "", nil)
				if err != nil {
					r.fail(where, fmt.Sprintf("could not start the server: %v", err), "")
					continue
				}
				code = strings.NewReplacer(s.addresses(true)...).Replace(code)
			}
			path := filepath.Join(work, b.saveAs)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, []byte(code), 0o644); err != nil {
				return err
			}
			continue
		}
		if filter != nil && !filter.MatchString(where) {
			continue
		}
		s, err := r.server(servers, work, b.server, b.env)
		if err != nil {
			r.fail(where, fmt.Sprintf("could not start the server: %v", err), "")
			continue
		}
		r.runBlock(where, work, b, s)
	}
	return nil
}

// server returns the page's server with the config file name ("" for the
// embedded default) and the environment variables env, started on first
// use.
func (r *runner) server(servers map[string]*server, work, name string, env []string) (*server, error) {
	key := strings.Join(append([]string{name}, env...), "\x00")
	if s, ok := servers[key]; ok {
		return s, nil
	}
	s, err := r.startServer(work, name, env)
	if err != nil {
		return nil, err
	}
	servers[key] = s
	return s, nil
}

// mcpAddr returns the address of the MCP server the pages share, starting
// it on first use.
func (r *runner) mcpAddr() (string, error) {
	if r.mcp == nil && r.mcpErr == nil {
		fmt.Println("== starting @modelcontextprotocol/server-everything " + mcptest.EverythingVersion)
		r.mcp, r.mcpErr = mcptest.RunEverything()
	}
	if r.mcpErr != nil {
		return "", r.mcpErr
	}
	return fmt.Sprintf("127.0.0.1:%d", r.mcp.Port), nil
}

func (r *runner) runBlock(where, work string, b *block, s *server) {
	pairs := append(s.addresses(true), grpcurlCommand, filepath.Join(r.bin, "grpcurl"))
	back := append(s.addresses(false), work+"/", "", work, ".")
	if strings.Contains(b.code, docMCP) {
		addr, err := r.mcpAddr()
		if err != nil {
			r.fail(where, fmt.Sprintf("could not start the MCP server: %v", err), "")
			return
		}
		pairs = append(pairs, docMCP, addr)
	}
	if r.mcp != nil {
		back = append(back, fmt.Sprintf("127.0.0.1:%d", r.mcp.Port), docMCP)
	}
	toReal := strings.NewReplacer(pairs...)
	code := toReal.Replace(b.code)
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	var cmd *exec.Cmd
	var extraEnv []string
	switch b.lang {
	case "go":
		dir := filepath.Join(r.tmp, "go", fmt.Sprintf("%s_%d", filepath.Base(b.file), b.line))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			r.fail(where, err.Error(), "")
			return
		}
		main := filepath.Join(dir, "main.go")
		if err := os.WriteFile(main, []byte(code), 0o644); err != nil {
			r.fail(where, err.Error(), "")
			return
		}
		cmd = exec.CommandContext(ctx, "go", "run", main)
		cmd.Dir = r.repo
	case "python":
		// As the clients' page says: from the repository's root, with the
		// generated code on the path, by the Python the Debian packages are for.
		file := filepath.Join(r.tmp, fmt.Sprintf("%s_%d.py", filepath.Base(b.file), b.line))
		if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
			r.fail(where, err.Error(), "")
			return
		}
		python := cmp.Or(os.Getenv("PYTHON"), "/usr/bin/python3")
		cmd = exec.CommandContext(ctx, python, file)
		cmd.Dir = r.repo
		extraEnv = append(extraEnv, "PYTHONPATH="+filepath.Join(r.repo, "gen", "python"))
	default:
		cmd = exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+code)
		cmd.Dir = work
		if b.inRepo {
			cmd.Dir = r.repo
		}
	}
	// The examples read the server's address from $LLMRELAY_ADDR; the Go
	// client's replace recipe points at the repository, $LLMRELAY_REPO.
	cmd.Env = append(append(append(r.env(), "LLMRELAY_ADDR="+s.listen, "LLMRELAY_REPO="+r.repo), extraEnv...), b.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order a terminal shows
	err := cmd.Run()
	status := 0
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		status = exitErr.ExitCode()
	default:
		r.fail(where, fmt.Sprintf("could not run: %v", err), out.String())
		return
	}
	if ctx.Err() != nil {
		r.fail(where, fmt.Sprintf("still running after %v: killed", blockTimeout), out.String())
		return
	}
	actual := strings.NewReplacer(back...).Replace(out.String())
	if r.verbose {
		fmt.Printf("-- %s (exit %d)\n%s", where, status, actual)
	}
	if status != b.exit {
		r.fail(where, fmt.Sprintf("exit status %d, want %d", status, b.exit), actual)
		return
	}
	if b.hasOutput && !matches(b.output, actual, b.jsonMode) {
		r.fail(where, fmt.Sprintf("the output differs from the one shown at %s:%d; %s", b.file, b.outputLine, firstDifference(b.output, actual, b.jsonMode)), actual)
		return
	}
	r.passed++
	fmt.Printf("ok   %s %s\n", where, firstLine(b.code))
}

func (r *runner) fail(where, why, output string) {
	r.failed++
	fmt.Printf("FAIL %s: %s\n", where, why)
	if output != "" {
		fmt.Println("     the output was:")
		for _, l := range strings.Split(strings.TrimRight(output, "\n"), "\n") {
			fmt.Println("     | " + l)
		}
	}
}

// env is the environment blocks and servers run in: the built llmrelay and
// grpcurl first on PATH, and none of the caller's LLMRELAY_* or OTEL_*
// settings.
func (r *runner) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LLMRELAY_") || strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "OTEL_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+r.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

type server struct {
	cmd     *exec.Cmd
	listen  string
	metrics string
	// http is the HTTP doors' address; "" when the server has them off.
	http string
	done chan struct{}
}

// addresses returns the replacements of the documented addresses by the
// server's (toReal), or back: pairs for strings.NewReplacer.
func (s *server) addresses(toReal bool) []string {
	var pairs []string
	for _, a := range [][2]string{{docListen, s.listen}, {docMetricsListen, s.metrics}, {docHTTPListen, s.http}} {
		switch {
		case a[1] == "":
		case toReal:
			pairs = append(pairs, a[0], a[1])
		default:
			pairs = append(pairs, a[1], a[0])
		}
	}
	return pairs
}

// The log lines that say where the server listens, in text or JSON.
var (
	serving        = regexp.MustCompile(`msg="llmrelay serving" listen=(\S+)|"msg":"llmrelay serving","listen":"([^"]+)"`)
	httpServing    = regexp.MustCompile(`msg="llmrelay serving" .*http_listen=(\S+)|"msg":"llmrelay serving",.*"http_listen":"([^"]+)"`)
	metricsServing = regexp.MustCompile(`msg="metrics serving" listen=(\S+)|"msg":"metrics serving","listen":"([^"]+)"`)
)

// address returns the address a serving line matched by re names.
func address(re *regexp.Regexp, line string) (string, bool) {
	m := re.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// startServer starts llmrelay on free loopback ports, with the config file
// the work directory holds under name, or the embedded default, and the
// environment variables env, and waits for its log to say where it
// listens.
func (r *runner) startServer(work, name string, env []string) (*server, error) {
	args := []string{"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"}
	if name != "" {
		// A file a block of the same page saved, or one in the repository.
		path := filepath.Join(work, name)
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join(r.repo, name)
		}
		args = append([]string{"--config", path}, args...)
	}
	cmd := exec.Command(filepath.Join(r.bin, "llmrelay"), args...)
	cmd.Dir = work
	cmd.Env = append(r.env(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	var logged strings.Builder
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		started := false
		for sc.Scan() {
			line := sc.Text()
			if !started {
				logged.WriteString(line + "\n")
				if addr, ok := address(metricsServing, line); ok {
					s.metrics = addr
				}
				if addr, ok := address(httpServing, line); ok {
					s.http = addr
				}
				if addr, ok := address(serving, line); ok {
					s.listen = addr
					started = true
					close(ready)
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		cmd.Wait()
		return nil, fmt.Errorf("llmrelay %s exited:\n%s", strings.Join(args, " "), logged.String())
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	s.cmd.Wait()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(l) > 70 {
		l = l[:67] + "..."
	}
	return l
}
