package clienttest_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/server"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopExampleServer()
	if code == 0 {
		if err := leaktest.Find(goleak.IgnoreAnyFunction(offstack.WorkerFunction)); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// The examples talk to a real llmrelay with the mock provider, started on
// a free loopback port the first time one asks for it.
var example struct {
	once sync.Once
	addr string
	srv  *server.Server
	done chan error
}

// exampleServer returns the address of the examples' llmrelay.
func exampleServer() string {
	example.once.Do(func() {
		cfg := config.Default()
		cfg.Providers = config.DefaultProviders()
		srv, err := server.New(cfg)
		if err != nil {
			panic(err)
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		example.addr, example.srv, example.done = lis.Addr().String(), srv, make(chan error, 1)
		go func() { example.done <- srv.Serve(lis) }()
	})
	return example.addr
}

func stopExampleServer() {
	if example.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	example.srv.Shutdown(ctx)
	<-example.done
}
