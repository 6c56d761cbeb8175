package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
)

// pathEmbeddings is OpenAI's embeddings endpoint (the SDKs'
// embeddings.create), answered in OpenAI's shape.
const pathEmbeddings = "/v1/embeddings"

// embeddingsMembers are the members of POST /v1/embeddings' body
// (https://platform.openai.com/docs/api-reference/embeddings/create), all
// of which llmrelay reads, so that none is ignored.
var embeddingsMembers = []string{"model", "input", "encoding_format", "dimensions", "user"}

// Encodings of the vectors (encoding_format).
const (
	encodingFloat  = "float"
	encodingBase64 = "base64"
)

// mustDimensions is how a dimensions member that is not a number of
// dimensions is refused.
const mustDimensions = "must be a whole number from 1 to 65536"

// decodeEmbeddings translates an embeddings request into the engine's
// EmbedRequest and the encoding the reply's vectors take. The body is
// read as the other doors read theirs (one JSON object, every member
// checked by name, a null member as one left out), so that a refusal
// names the member at fault in the client's terms. input is a string or
// a list of strings; the token arrays OpenAI also takes are refused
// (llmrelay cannot know the tokenizer of every target's model). user
// becomes the call's metadata label "user", as the chat door's does. A
// member llmrelay does not know is refused, not ignored.
func decodeEmbeddings(body []byte) (*llmrelayv1.EmbedRequest, string, *failure) {
	fields, err := objectFields(body)
	if err != nil {
		f := requestError("", "the request body "+err.Error())
		return nil, "", &f
	}
	for _, key := range sortedKeys(fields) {
		if !slices.Contains(embeddingsMembers, key) {
			f := requestError(key, "llmrelay does not know this member of an embeddings request")
			return nil, "", &f
		}
	}
	req := &llmrelayv1.EmbedRequest{}
	encoding := encodingFloat
	for _, key := range embeddingsMembers {
		raw := fields[key]
		if isNull(raw) {
			continue
		}
		var err error
		switch key {
		case "model":
			err = decodeAs(raw, &req.Model, "must be a string")
		case "input":
			req.Inputs, err = embeddingsInput(raw)
		case "encoding_format":
			if err = decodeAs(raw, &encoding, "must be a string"); err == nil && encoding != encodingFloat && encoding != encodingBase64 {
				err = errors.New(`must be "float" or "base64", not ` + strconv.Quote(encoding))
			}
		case "dimensions":
			d, ok := integerIn(raw, 1, math.MaxUint32)
			if !ok {
				err = errors.New(mustDimensions)
			}
			req.Dimensions = proto.Uint32(uint32(d))
		case "user":
			var u string
			if err = decodeAs(raw, &u, "must be a string"); u != "" {
				req.Metadata = map[string]string{"user": u}
			}
		}
		if err != nil {
			f := memberError(key, err)
			return nil, "", &f
		}
	}
	if isNull(fields["input"]) {
		f := requestError("input", "is required: a string or a list of strings")
		return nil, "", &f
	}
	return req, encoding, nil
}

// embeddingsInput reads input: a string, or a list of strings.
func embeddingsInput(raw json.RawMessage) ([]string, error) {
	in := bytes.TrimSpace(raw)
	switch in[0] {
	case '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, jsonProblem(err)
		}
		return []string{s}, nil
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(in, &list); err != nil {
			return nil, jsonProblem(err)
		}
		inputs := make([]string, len(list))
		for i, item := range list {
			if isNull(item) || json.Unmarshal(item, &inputs[i]) != nil {
				return nil, &paramError{"[" + strconv.Itoa(i) + "]", "must be a string: llmrelay embeds text, not token arrays (the token ids of one model mean nothing to another a route may fall back to)"}
			}
		}
		return inputs, nil
	}
	return nil, errors.New("must be a string or a list of strings")
}

// embeddingsParam names a field of the EmbedRequest as the client wrote
// it.
func embeddingsParam(field string) string {
	if rest, ok := strings.CutPrefix(field, "inputs"); ok {
		return "input" + rest
	}
	if field == "metadata" || strings.HasPrefix(field, "metadata[") {
		return "user"
	}
	return field
}

// embeddingsReply is the answer, OpenAI's CreateEmbeddingResponse.
type embeddingsReply struct {
	Object string           `json:"object"`
	Data   []embeddingEntry `json:"data"`
	Model  string           `json:"model"`
	Usage  struct {
		PromptTokens uint64 `json:"prompt_tokens"`
		TotalTokens  uint64 `json:"total_tokens"`
	} `json:"usage"`
}

// embeddingEntry is one vector: its floats, or for base64 a string of the
// float32 values' little-endian bytes, as OpenAI sends them.
type embeddingEntry struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// embeddingsBody writes resp as OpenAI's reply to a request for model,
// with the vectors in encoding.
func embeddingsBody(resp *llmrelayv1.EmbedResponse, model, encoding string) ([]byte, error) {
	r := embeddingsReply{Object: "list", Data: make([]embeddingEntry, len(resp.GetEmbeddings())), Model: model}
	for i, e := range resp.GetEmbeddings() {
		var v any = e.GetValues()
		if encoding == encodingBase64 {
			b := make([]byte, 4*len(e.GetValues()))
			for j, f := range e.GetValues() {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
			v = base64.StdEncoding.EncodeToString(b)
		}
		r.Data[i] = embeddingEntry{Object: "embedding", Index: i, Embedding: v}
	}
	r.Usage.PromptTokens = resp.GetUsage().GetInputTokens()
	r.Usage.TotalTokens = r.Usage.PromptTokens
	return json.Marshal(r)
}

// embeddings serves POST /v1/embeddings: the embeddings of a request's
// inputs, in OpenAI's shape, from the engine's Embed. The caller is
// authenticated before its body is read (the embed or generate scope),
// then the engine admits the call as it admits a gRPC Embed (the key's
// rate, deadline, size and checks, model access, resolution, budget,
// provider slot) and runs it; an SDK's HeaderTimeout is the call's
// deadline. The provider and model that answered are in the reply's
// headers; its model member is the one the request named.
func (d *door) embeddings(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f := openAI{}
	ctx, info := callinfo.NewContext(r.Context())
	info.SetInterface(f.name())
	x := newExchange(w, f, replyInfo{requestID: info.RequestID()}, false)
	eng := d.o.Engine()
	cl := caller(r, llmrelayv1.LLMService_Embed_FullMethodName)
	actx, err := eng.Admission().Auth.Authenticate(ctx, cl)
	if err != nil {
		fail := failureOf(err, nil)
		x.fail(fail)
		d.log(ctx, r, f, start, fail.status, &fail, err)
		return
	}
	body, fail := d.readBody(w, r)
	var req *llmrelayv1.EmbedRequest
	var encoding string
	if fail == nil {
		req, encoding, fail = decodeEmbeddings(body)
	}
	if fail != nil {
		x.fail(*fail)
		d.log(ctx, r, f, start, fail.status, fail, nil)
		return
	}
	info.RecordMetadata(req.GetMetadata())
	actx, stop := x.clientDeadline(actx, r.Header, start)
	defer stop()
	var resp *llmrelayv1.EmbedResponse
	actx, release, err := eng.Admission().AdmitAuthenticated(actx, cl, req)
	if err == nil {
		err = d.run(actx, r, release, func() (err error) {
			resp, err = eng.Embed(actx, req)
			return err
		})
	}
	if err == nil {
		body, err = embeddingsBody(resp, req.GetModel(), encoding)
	}
	if err != nil {
		fail := failureOf(err, embeddingsParam)
		x.fail(fail)
		d.log(ctx, r, f, start, x.status, &fail, err)
		return
	}
	w.Header().Set(HeaderProvider, resp.GetProvider())
	w.Header().Set(HeaderModel, resp.GetModel())
	w.Header().Set(HeaderAttempts, strconv.Itoa(int(resp.GetAttempts())))
	_ = x.reply(body)
	d.log(ctx, r, f, start, x.status, nil, nil)
}
