package gemini

import "github.com/llmrelay/llmrelay/internal/provider/jsonscan"

// decodeFast decodes data into c exactly as encoding/json would, c being
// as Decode prepares it (Candidates empty, over cleared elements), for the
// chunks that make up nearly every stream: candidates with text, thought
// and signature parts, their finish reasons, and the usage. It scans the
// data once, on the stream's goroutine, where encoding/json scans it twice
// through reflection, on a worker (see httpx.JSONDecoder).
//
// It reports false, leaving c in any state, on function calls, prompt
// feedback, finish messages and errors, and on anything it does not decode the way
// encoding/json does (see package jsonscan). The caller then decodes data
// with encoding/json, which has the last word; FuzzDecodeFast holds the two
// to the same chunks.
func decodeFast(data []byte, c *chunk) bool {
	p := jsonscan.New(data)
	if p.Peek() != '{' {
		return false
	}
	var seen uint8
	ok := p.Object(func(key []byte) bool {
		switch string(key) {
		case "candidates":
			return jsonscan.Once(&seen, 1) && scanCandidates(&p, c)
		case "usageMetadata":
			return jsonscan.Once(&seen, 2) && scanUsage(&p, c)
		case "promptFeedback", "error":
			return p.Null() // these take the slow path
		}
		return !jsonscan.FoldsTo(key, "candidates", "usageMetadata", "promptFeedback", "error") && p.Skip()
	})
	return ok && p.End()
}

// scanCandidates parses the candidates array (or null) into c.Candidates,
// reusing its backing array, whose elements are cleared.
func scanCandidates(p *jsonscan.Scanner, c *chunk) bool {
	if p.Null() {
		c.Candidates = nil
		return true
	}
	if !p.Eat('[') {
		return false
	}
	c.Candidates = c.Candidates[:0]
	if p.Eat(']') {
		return true
	}
	for {
		c.Candidates = append(c.Candidates, candidate{})
		if cand := &c.Candidates[len(c.Candidates)-1]; !p.Null() && !scanCandidate(p, cand) {
			return false
		}
		if p.Eat(',') {
			continue
		}
		return p.Eat(']')
	}
}

func scanCandidate(p *jsonscan.Scanner, c *candidate) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			n, ok := p.Int()
			c.Index = int(n)
			return jsonscan.Once(&seen, 1) && ok
		case "content":
			return jsonscan.Once(&seen, 2) && (p.Null() || p.Object(func(key []byte) bool {
				if string(key) == "parts" {
					return jsonscan.Once(&seen, 4) && scanParts(p, &c.Content.Parts)
				}
				return !jsonscan.FoldsTo(key, "parts") && p.Skip()
			}))
		case "finishReason":
			return jsonscan.Once(&seen, 8) && p.Str(&c.FinishReason)
		case "finishMessage":
			return p.Null() // a failed finish takes the slow path
		}
		return !jsonscan.FoldsTo(key, "index", "content", "finishReason", "finishMessage") && p.Skip()
	})
}

// scanParts parses a content's parts (or null) into the fresh *parts.
func scanParts(p *jsonscan.Scanner, parts *[]responsePart) bool {
	if p.Null() {
		*parts = nil
		return true
	}
	if !p.Eat('[') {
		return false
	}
	*parts = []responsePart{} // encoding/json makes [] an empty list, not nil
	if p.Eat(']') {
		return true
	}
	for {
		*parts = append(*parts, responsePart{})
		part := &(*parts)[len(*parts)-1]
		if !p.Null() && !scanPart(p, part) {
			return false
		}
		if p.Eat(',') {
			continue
		}
		return p.Eat(']')
	}
}

func scanPart(p *jsonscan.Scanner, part *responsePart) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "text":
			return jsonscan.Once(&seen, 1) && p.Str(&part.Text)
		case "thought":
			return jsonscan.Once(&seen, 2) && p.Bool(&part.Thought)
		case "thoughtSignature":
			return jsonscan.Once(&seen, 4) && p.Str(&part.ThoughtSignature)
		case "functionCall":
			return p.Null() // a call takes the slow path
		}
		return !jsonscan.FoldsTo(key, "text", "thought", "thoughtSignature", "functionCall") && p.Skip()
	})
}

// scanUsage parses usageMetadata (or null) into c.UsageMetadata.
func scanUsage(p *jsonscan.Scanner, c *chunk) bool {
	if p.Null() {
		c.UsageMetadata = nil
		return true
	}
	u := &usageMetadata{}
	var seen uint8
	ok := p.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "promptTokenCount":
			u.PromptTokenCount, ok = p.Int()
			return jsonscan.Once(&seen, 1) && ok
		case "candidatesTokenCount":
			u.CandidatesTokenCount, ok = p.Int()
			return jsonscan.Once(&seen, 2) && ok
		case "thoughtsTokenCount":
			u.ThoughtsTokenCount, ok = p.Int()
			return jsonscan.Once(&seen, 4) && ok
		case "cachedContentTokenCount":
			u.CachedContentTokenCount, ok = p.Int()
			return jsonscan.Once(&seen, 8) && ok
		case "toolUsePromptTokenCount":
			u.ToolUsePromptTokenCount, ok = p.Int()
			return jsonscan.Once(&seen, 16) && ok
		}
		return !jsonscan.FoldsTo(key, "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount",
			"cachedContentTokenCount", "toolUsePromptTokenCount") && p.Skip()
	})
	c.UsageMetadata = u
	return ok
}
