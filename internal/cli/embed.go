package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// maxEmbedReply is the largest Embed response embed reads. gRPC clients
// take 4 MiB by default, a tenth of the proto's bound (2048 inputs) at
// OpenAI's 1536 values (12 MiB, docs/embeddings.md#bounds); this takes
// 2048 vectors of text-embedding-3-large's 3072 values with room to spare.
const maxEmbedReply = 64 << 20

var embedCommand = &command{
	name:    "embed",
	usage:   "embed [flags] -m MODEL TEXT...",
	summary: "print the embeddings of some texts from a running server",
	about: `Calls Embed on a running llmrelay with the Go client and prints one
embedding per TEXT, in order, one a line: a JSON array of its values. Each
argument is one text; with none (or "-"), each line of stdin is one. The
provider, model, usage and attempts go to stderr. --json prints the whole
response as JSON instead, on one line.

  llmrelay embed -m mock/echo "the cat sat" "a dog"

Exit status: 0 the call succeeded; 1 it failed (the error's code, ErrorInfo
reason and message on stderr); 2 the command line was wrong.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var cf callFlags
		cf.define(fs)
		model := modelFlag(fs)
		dimensions := fs.Uint("dimensions", 0, "the length of each vector, `N` values, for a model that can shorten its own (default: the model's)")
		timeout := durationFlag(fs, "timeout", 0, "the call's deadline, a `DURATION` such as 30s (default: the server's)")
		options := fs.String("provider-options", "", "the request's provider_options, a JSON `OBJECT` (for openai: '{\"user\": \"u-1\"}')")
		return func(ctx context.Context, args []string) error {
			if *model == "" {
				return usagef("embed", "embed: -m MODEL is required (llmrelay models lists them)")
			}
			if *timeout < 0 {
				return usagef("embed", "embed: --timeout %v is negative; give the call's deadline, e.g. 30s, or leave it out for the server's", *timeout)
			}
			if *dimensions > 65536 {
				return usagef("embed", "embed: --dimensions %d is more than 65536", *dimensions)
			}
			// 0 is the flag's unset value, but one given is a mistake: the
			// call would silently take the model's own length.
			given := false
			fs.Visit(func(f *flag.Flag) { given = given || f.Name == "dimensions" })
			if given && *dimensions == 0 {
				return usagef("embed", "embed: --dimensions 0 is not a length: give 1 to 65536, or leave it out for the model's own")
			}
			texts, err := readTexts(args, env.Stdin)
			if err != nil {
				return err
			}
			req := &llmrelayv1.EmbedRequest{Model: *model, Inputs: texts}
			if *dimensions > 0 {
				d := uint32(*dimensions)
				req.Dimensions = &d
			}
			if *options != "" {
				req.ProviderOptions = &structpb.Struct{}
				if err := protojson.Unmarshal([]byte(*options), req.ProviderOptions); err != nil {
					return usagef("embed", "embed: --provider-options is not a JSON object: %v", err)
				}
			}
			c, addr, err := cf.dial("embed", env)
			if err != nil {
				return err
			}
			defer c.Close()
			if *timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, *timeout)
				defer cancel()
			}
			resp, err := c.Embed(ctx, req, grpc.MaxCallRecvMsgSize(maxEmbedReply))
			if err != nil {
				return callError(addr, err)
			}
			if cf.json {
				b, err := protojson.Marshal(resp)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
				return err
			}
			return printEmbeddings(env, resp)
		}
	},
}

// readTexts returns the texts to embed: the arguments, one text each, or
// stdin's lines when there are none or the only one is "-". A line may not
// be empty: the texts are numbered as the lines are, and the server takes
// no empty text.
func readTexts(args []string, stdin io.Reader) ([]string, error) {
	if len(args) > 0 && !(len(args) == 1 && args[0] == "-") {
		for i, a := range args {
			if a == "" {
				return nil, usagef("embed", "embed: TEXT %d is empty; the server embeds only texts of at least one character", i+1)
			}
		}
		return args, nil
	}
	if stdin == nil {
		return nil, usagef("embed", "embed: no TEXT given")
	}
	var texts []string
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20) // a text is at most 65,536 bytes; a longer line is the server's to refuse
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			return nil, usagef("embed", "embed: stdin line %d is empty; each line is one text to embed, and the server embeds only texts of at least one character", n)
		}
		texts = append(texts, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: reading the texts from stdin: %w", err)
	}
	if len(texts) == 0 {
		return nil, usagef("embed", "embed: no TEXT given (as arguments or as lines of stdin)")
	}
	return texts, nil
}

// printEmbeddings prints each embedding on stdout as a JSON array, one a
// line, and what answered and what it cost on stderr.
func printEmbeddings(env Env, resp *llmrelayv1.EmbedResponse) error {
	w := bufio.NewWriter(env.Stdout)
	var b []byte
	for _, e := range resp.GetEmbeddings() {
		b = append(b[:0], '[')
		for i, v := range e.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
		}
		b = append(b, "]\n"...)
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	n := uint32(len(resp.GetEmbeddings()))
	size := 0
	if n > 0 {
		size = len(resp.GetEmbeddings()[0].GetValues())
	}
	tokens := "the provider counted no tokens"
	if t := resp.GetUsage().GetInputTokens(); t > 0 {
		tokens = fmt.Sprintf("%d input token%s", t, plural(uint32(min(t, 2))))
	}
	fmt.Fprintf(env.Stderr, "llmrelay: %s/%s, %d embedding%s of %d values, %s, %d attempt%s\n",
		resp.GetProvider(), resp.GetModel(), n, plural(n), size, tokens, resp.GetAttempts(), plural(resp.GetAttempts()))
	return nil
}
