// A loopback Anthropic-format upstream for scripts/test-http-sdks.sh: the
// server's provider `claude` (kind anthropic) points here, so that the
// scenarios can reach what only an anthropic provider gives (token counts,
// the stop sequence that ended a reply, the prompt's tokens in
// message_start). It answers as Anthropic's Messages API does, for the
// model `claude-up` only and with the key in $UPSTREAM_KEY:
//
// - POST /v1/messages (streamed, as llmrelay asks): the last user message
//   back, one text delta per word, cut before the first of the request's
//   stop_sequences it holds (stop_reason stop_sequence and the sequence in
//   message_delta, as Anthropic says), usage input_tokens in message_start
//   and again, with output_tokens, in message_delta.
// - POST /v1/messages/count_tokens: {"input_tokens": N}, refusing members
//   the endpoint does not take as Anthropic does.
// - GET /recorded (not Anthropic's): the bodies of the POST /v1/messages
//   requests it received, in order, as a JSON list, for the scenarios to
//   check what reached the provider in its own format (an image's block).
//
// N, the prompt's tokens, is its words: the system prompt's and each
// message's text.
//
// It is also a Gemini 3 upstream, for the server's provider `gem` (kind
// gemini, base URL .../gemini/v1beta), model `gemini-up`, with the same
// key in x-goog-api-key: POST .../models/gemini-up:streamGenerateContent
// calls get_country with a thoughtSignature on the functionCall part while
// the request has no function response, as Gemini 3 does; once it has one,
// it answers "Paris", or, as Gemini 3 does, 400 when the function call sent
// back lacks that signature. It prints "listening PORT" once it listens.
import http from 'node:http';

const KEY = process.env.UPSTREAM_KEY;
const MODEL = 'claude-up';
const COUNT_MEMBERS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config',
  'output_format', 'cache_control', 'speed', 'mcp_servers', 'context_management']);

const recorded = [];

const texts = (content) => (typeof content === 'string' ? [content]
  : (content ?? []).filter((b) => b.type === 'text').map((b) => b.text));
const words = (s) => s.match(/\S+\s*/g) ?? [];
const inputTokens = (body) => [...texts(body.system), ...(body.messages ?? []).flatMap((m) => texts(m.content))]
  .reduce((n, t) => n + words(t).length, 0);

function error(res, status, type, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

function messages(res, body) {
  let text = texts(body.messages.findLast((m) => m.role === 'user')?.content).join('\n');
  let stop = null;
  for (const s of body.stop_sequences ?? []) {
    const i = text.indexOf(s);
    if (i >= 0 && (stop === null || i < text.indexOf(stop))) stop = s;
  }
  if (stop !== null) text = text.slice(0, text.indexOf(stop));
  const input = inputTokens(body);
  const out = words(text);
  const usage = { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_upstream' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', { message: { id: 'msg_upstream', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  for (const w of out) send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: w } });
  send('content_block_stop', { index: 0 });
  send('message_delta', { delta: { stop_reason: stop === null ? 'end_turn' : 'stop_sequence', stop_sequence: stop }, usage: { ...usage, output_tokens: out.length } });
  send('message_stop', {});
  res.end();
}

const GEMINI_PATH = '/gemini/v1beta/models/gemini-up:streamGenerateContent?alt=sse';
// A thought signature as Gemini writes them: standard base64, '+' and '/'.
const THOUGHT_SIGNATURE = 'EpwICpkIAXLI2nx+lU6gsWZa/ZHRYkX1orzuM8vSUFwaAt1JRxEC2hJzPAcAu3PWaKz7X+PI==';

function gemini(res, body) {
  const parts = (body.contents ?? []).flatMap((c) => c.parts ?? []);
  const events = [];
  if (!parts.some((p) => p.functionResponse)) {
    events.push({ content: { role: 'model', parts: [{ functionCall: { name: 'get_country', args: {} }, thoughtSignature: THOUGHT_SIGNATURE }] } },
      { content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' });
  } else if (parts.some((p) => p.functionCall && p.thoughtSignature !== THOUGHT_SIGNATURE)) {
    res.writeHead(400, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT',
      message: 'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.' } }));
  } else {
    events.push({ content: { role: 'model', parts: [{ text: 'Paris' }] }, finishReason: 'STOP' });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [i, candidate] of events.entries()) {
    const usage = { promptTokenCount: 29, candidatesTokenCount: i + 1, totalTokenCount: 30 + i };
    res.write(`data: ${JSON.stringify({ candidates: [{ ...candidate, index: 0 }], usageMetadata: usage, modelVersion: 'gemini-3-pro-preview' })}\r\n\r\n`);
  }
  res.end();
}

function countTokens(res, body) {
  for (const k of Object.keys(body)) {
    if (!COUNT_MEMBERS.has(k)) return error(res, 400, 'invalid_request_error', `${k}: Extra inputs are not permitted`);
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ input_tokens: inputTokens(body) }));
}

const server = http.createServer(async (req, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const isGemini = req.method === 'POST' && req.url === GEMINI_PATH;
  if (req.headers[isGemini ? 'x-goog-api-key' : 'x-api-key'] !== KEY) return error(res, 401, 'authentication_error', 'invalid key');
  if (req.method === 'GET' && req.url === '/recorded') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify(recorded));
  }
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return error(res, 400, 'invalid_request_error', 'the body is not JSON');
  }
  if (isGemini) return gemini(res, body);
  if (body.model !== MODEL) return error(res, 404, 'not_found_error', `model: ${body.model}`);
  if (req.method === 'POST' && req.url === '/v1/messages') {
    recorded.push(body);
    return messages(res, body);
  }
  if (req.method === 'POST' && req.url === '/v1/messages/count_tokens') return countTokens(res, body);
  return error(res, 404, 'not_found_error', `${req.method} ${req.url}`);
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
