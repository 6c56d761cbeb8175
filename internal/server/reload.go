package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/llmrelay/llmrelay/internal/config"
)

// reloader is how the server reloads its config: where the new config
// comes from, and one reload at a time.
type reloader struct {
	mu sync.Mutex
	// load loads and validates the config from its sources (file,
	// environment, flags); nil: the server has no source to reload from.
	load func() (*config.Config, error)
	// path is the config file, "" without one; a watch follows it.
	path string
	// digest is the SHA-256 of the file's content when it was last loaded,
	// so that the watch reloads only what changed.
	digest [sha256.Size]byte
	// done, when set, is told of every reload's result (tests).
	done func(error)
}

// WithConfigSource gives the server its config's sources, for reloads:
// load loads and validates the config as at start (defaults, the file,
// the environment, the flags), path is the config file ("" for none),
// which reload.watch follows.
func WithConfigSource(path string, load func() (*config.Config, error)) Option {
	return func(s *Server) { s.reloader.load, s.reloader.path = load, path }
}

// ErrNoConfigSource is the error of a reload on a server that was given no
// config source (WithConfigSource).
var ErrNoConfigSource = errors.New("no config source to reload from")

// Reload applies cfg, a new config, to the calls that start from now on;
// calls in flight finish on the config they started with. cfg is validated
// as a whole first, and its runtime (keys, providers, chain, service) built
// before anything changes: if either fails, Reload returns the error and
// the server goes on as it was. The settings that only a restart can
// change keep their running values (config.KeepRestartOnly): Reload
// returns those cfg changed, with both values.
func (s *Server) Reload(cfg *config.Config) (needRestart []config.Change, err error) {
	s.reloader.mu.Lock()
	defer s.reloader.mu.Unlock()
	return s.apply(cfg)
}

// apply is Reload under the reload lock.
func (s *Server) apply(cfg *config.Config) ([]config.Change, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	prev := s.current.Load()
	needRestart := cfg.KeepRestartOnly(prev.cfg)
	// What the server would run with is the new settings on the running
	// addresses: checked again, so that a config without keys is not
	// applied to a server that listens beyond loopback because its own
	// listen address (the loopback default) passed.
	if err := cfg.Validate(); err != nil {
		if len(needRestart) > 0 {
			// The problem may be the file's own value of a setting that
			// kept its running one (max_request_bytes over the running
			// max_recv_msg_bytes): say so, or the refusal names a value
			// the file does not hold.
			values := "value of "
			if len(needRestart) > 1 {
				values = "values of "
			}
			var kept []string
			for _, c := range needRestart {
				kept = append(kept, c.Setting)
			}
			return nil, fmt.Errorf("%w (checked with the running %s%s, which the file changes but only a restart applies)",
				err, values, strings.Join(kept, ", "))
		}
		return nil, err
	}
	rt, err := s.newRuntime(cfg, prev)
	if err != nil {
		return nil, err
	}
	s.current.Store(rt)
	s.tools.Apply(rt.tools)
	s.throttle.Configure(cfg.Auth.Throttle)
	s.setLogLevel(cfg)
	return needRestart, nil
}

// setLogLevel sets the log level of cfg, when the server owns it.
func (s *Server) setLogLevel(cfg *config.Config) {
	if s.logLevel == nil {
		return
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(cfg.Log.Level))); err == nil {
		s.logLevel.Set(l)
	}
}

// reload is what SIGHUP and the config watch do: load the config from its
// sources and apply it (Reload). A config that does not load or validate
// is refused: the server goes on with the config it has, and the error is
// logged. Every reload is counted (metrics.ConfigReloaded) and logged,
// with the settings that changed but need a restart.
func (s *Server) reload(trigger string) error {
	r := &s.reloader
	r.mu.Lock()
	defer r.mu.Unlock()
	err := s.reloadLocked(trigger)
	if r.done != nil {
		r.done(err)
	}
	return err
}

func (s *Server) reloadLocked(trigger string) error {
	r := &s.reloader
	if r.load == nil {
		s.log.Warn("config reload: the server has no config source; still serving with the config it has", "trigger", trigger)
		return ErrNoConfigSource
	}
	digest := r.fileDigest()
	cfg, err := r.load()
	var needRestart []config.Change
	if err == nil {
		needRestart, err = s.apply(cfg)
	}
	if err != nil {
		s.metrics.ConfigReloaded(false)
		s.log.Error("config reload refused: still serving with the previous config", "trigger", trigger, "config", r.path, "error", err)
		return err
	}
	r.digest = digest
	s.metrics.ConfigReloaded(true)
	for _, c := range needRestart {
		// Both values, so that the line says what a restart would change:
		// none of these settings holds a secret (config.KeepRestartOnly).
		s.log.Warn("config reload: this setting changed but needs a restart; still using its running value",
			"setting", c.Setting, "running", c.Running, "new", c.New)
	}
	rt := s.current.Load()
	s.log.Info("config reloaded: new calls use it, calls in flight finish on the previous one",
		"trigger", trigger, "config", r.path, "keys", rt.keys.Len(), "providers", rt.providers.Names())
	s.logWarnings(cfg)
	return nil
}

// logWarnings logs each of cfg's warnings (config.Config.Warnings):
// settings that are valid but do nothing as the rest of the config
// stands, such as a key's model pattern that matches no provider. The
// server runs with them, so this is how the operator hears of them: at
// start and at each reload whose config has them.
func (s *Server) logWarnings(cfg *config.Config) {
	for _, w := range cfg.Warnings() {
		attrs := []any{"setting", w.Path, "warning", w.Problem}
		if w.Line > 0 {
			attrs = append(attrs, "config", w.File+":"+strconv.Itoa(w.Line))
		}
		s.log.Warn("config warning: a setting that does nothing as the rest of the config stands", attrs...)
	}
}

// fileDigest returns the SHA-256 of the config file's content (zero
// without a file or when it cannot be read: the load reports why).
func (r *reloader) fileDigest() [sha256.Size]byte {
	if r.path == "" {
		return [sha256.Size]byte{}
	}
	b, err := os.ReadFile(r.path)
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}

// watchDebounce is how long the watch waits after a change to the config
// file for more before it reloads: editors and Kubernetes write a file in
// several steps.
const watchDebounce = 300 * time.Millisecond

// watch reloads the config when its file changes, until ctx ends or a
// shutdown begins (s.stopping); its stop returns once its goroutine has. It watches the file's directory (and,
// when the path is a symbolic link, its target's), so that a file
// replaced by rename and a Kubernetes ConfigMap update (a symbolic link
// swapped) are seen, and reloads only when the content changed.
func (s *Server) watch(ctx context.Context) (stop func(), err error) {
	r := &s.reloader
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	dirs := []string{filepath.Dir(r.path)}
	if real, err := filepath.EvalSymlinks(r.path); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return nil, err
		}
	}
	r.mu.Lock()
	r.digest = r.fileDigest()
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.followChanges(ctx, w)
	}()
	s.log.Info("watching the config file for changes", "config", r.path)
	return func() {
		cancel()
		w.Close()
		<-done
	}, nil
}

// followChanges reloads after each burst of events in the watched
// directories, when the file's content changed, until ctx ends or a
// shutdown begins.
func (s *Server) followChanges(ctx context.Context, w *fsnotify.Watcher) {
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopping.Done():
			s.log.Info("shutting down: no longer watching the config file", "config", s.reloader.path)
			return
		case _, ok := <-w.Events:
			if !ok {
				return
			}
			debounce = time.After(watchDebounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Warn("watching the config file", "error", err)
		case <-debounce:
			debounce = nil
			if s.stopping.Err() == nil && s.fileChanged() {
				_ = s.reload("config file changed")
			}
		}
	}
}

// fileChanged reports whether the config file's content differs from what
// was last loaded (a file that cannot be read counts as changed, so that
// the reload reports why).
func (s *Server) fileChanged() bool {
	r := &s.reloader
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.fileDigest()
	return d == [sha256.Size]byte{} || !bytes.Equal(d[:], r.digest[:])
}
