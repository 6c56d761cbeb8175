package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/llmrelay/llmrelay/internal/auth"
)

// minKeyLen is the shortest key hash-key accepts without a warning.
const minKeyLen = 16

var hashKeyCommand = &command{
	name:    "hash-key",
	usage:   "hash-key < FILE",
	summary: "print the sha256 line of an API key, for auth.keys",
	about: `Reads an API key from the first line of stdin and prints the line for the
key's entry under auth.keys in the config file:

  sha256: 2a012092ec281a3efccbad9664dab9443eaed9c2fd44271e7c9585b5a4309184

The key itself is never printed or stored. Read it from a file or a pipe,
never from an argument, so that it stays out of your shell history:

  openssl rand -hex 32 > checkout.key
  llmrelay hash-key < checkout.key

A key that clients could not send as "authorization: Bearer <key>" (empty,
with spaces, over 512 bytes) is refused; one under 16 characters gets a
warning.`,
	setup: func(_ *flag.FlagSet, env Env) func(context.Context, []string) error {
		return func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("hash-key", "hash-key takes no arguments (a key on the command line would land in your shell history): pipe the key on stdin, e.g. `llmrelay hash-key < key.txt`")
			}
			return hashKey(env.Stdin, env.Stdout, env.Stderr)
		}
	},
}

// hashKey reads an API key from the first line of stdin and prints the
// `sha256:` line for the key's entry under auth.keys.
func hashKey(stdin io.Reader, stdout, stderr io.Writer) error {
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
		fmt.Fprintf(stderr, "llmrelay: warning: the key is only %d characters; use a random one of at least 32, e.g. `openssl rand -hex 32`\n", len(key))
	}
	fmt.Fprintln(stdout, auth.HashPrefix+" "+auth.HashKey(key))
	return nil
}
