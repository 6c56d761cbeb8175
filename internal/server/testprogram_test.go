package server_test

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
)

// proxyClient starts cmd, a proxy in front of llmrelay, and stops it when
// the test ends; it waits until the proxy accepts connections on
// 127.0.0.1:front and returns a client connected through it. log reads the
// proxy's log, shown when the proxy exits early or the test fails.
func proxyClient(t *testing.T, cmd *exec.Cmd, front int, log func() string) llmrelayv1.LLMServiceClient {
	t.Helper()
	name := filepath.Base(cmd.Path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, log())
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", front)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("%s exited: %s", name, log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return llmrelayv1.NewLLMServiceClient(conn)
}
