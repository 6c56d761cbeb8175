package server_test

import (
	"fmt"
	"os/exec"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// proxyClient starts cmd, a proxy in front of llmrelay, and stops it when
// the test ends; it waits until the proxy accepts connections on
// 127.0.0.1:front and returns a client connected through it. log reads the
// proxy's log, shown when the proxy exits early or the test fails.
func proxyClient(t *testing.T, cmd *exec.Cmd, front int, log func() string) llmrelayv1.LLMServiceClient {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", front)
	servertest.StartProgram(t, cmd, addr, log)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return llmrelayv1.NewLLMServiceClient(conn)
}
