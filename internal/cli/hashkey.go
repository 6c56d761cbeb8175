package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/llmrelay/llmrelay/internal/auth"
)

// minKeyLen is the shortest key hash-key accepts without a warning.
const minKeyLen = 16

// hashKey implements `llmrelay hash-key`: it reads an API key from the
// first line of stdin and prints the `sha256:` line for the key's entry
// under auth.keys. The key itself is never printed or stored.
func hashKey(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("hash-key takes no arguments: pipe the key on stdin, e.g. `llmrelay hash-key < key.txt`")
	}
	if stdin == nil {
		return errors.New("hash-key: no stdin")
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, auth.MaxKeyLen+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("hash-key: reading the key: %w", err)
	}
	key := strings.TrimSpace(line)
	// A key is usable only if clients can send it as "Bearer <key>".
	if _, err := auth.ParseBearer([]string{"Bearer " + key}); err != nil {
		return fmt.Errorf("hash-key: the key cannot be sent as a Bearer credential: %w", err)
	}
	if len(key) < minKeyLen {
		fmt.Fprintf(stderr, "warning: the key is only %d characters; use a random one of at least 32, e.g. `openssl rand -hex 32`\n", len(key))
	}
	fmt.Fprintln(stdout, "sha256: "+auth.HashKey(key))
	return nil
}
