// The official OpenAI and Anthropic npm SDKs against llmrelay's HTTP doors,
// unchanged but for base URL and key (scripts/test-http-sdks.sh runs this
// against a fresh server with the mock provider). Each scenario prints
// "ok   <sdk>: <what>" or "FAIL <sdk>: <what>: <why>"; the exit status is
// the number of failures.
//
// The mock provider's scripted faults reach it through the `llmrelay`
// request member (provider_options), which both SDKs pass through as any
// extra body parameter. A counting fetch, given to the SDKs as their
// `fetch` option, counts the HTTP requests each SDK makes.
//
// CLAUDE is a model of an anthropic provider whose upstream is a loopback
// Anthropic-format server (upstream.mjs): it echoes the last user message,
// stops at the request's stop sequences as Anthropic does, and counts a
// prompt's tokens as its words (the system prompt's and the messages').
// The upstream keeps the requests it received (UPSTREAM_HTTP/recorded,
// with the key in UPSTREAM_KEY), so that a scenario can check what
// reached the provider, in the provider's own format.
// GEMINI is a model of a gemini provider on the same upstream, which calls
// a tool with a thought signature and wants it back, as Gemini 3 does.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const base = process.env.LLMRELAY_HTTP; // http://127.0.0.1:PORT
const key = process.env.LLMRELAY_KEY;
const upstream = process.env.UPSTREAM_HTTP; // the loopback upstream, http://127.0.0.1:PORT
const upstreamKey = process.env.UPSTREAM_KEY;
if (!base || !key || !upstream || !upstreamKey) {
  console.error('set LLMRELAY_HTTP, LLMRELAY_KEY, UPSTREAM_HTTP and UPSTREAM_KEY');
  process.exit(2);
}
const TEXT = 'the quick brown fox jumps over the lazy dog';
const MODEL = 'mock/echo';
const CLAUDE = 'claude/claude-up';
const GEMINI = 'gem/gemini-up';

let failures = 0;
async function scenario(name, fn) {
  try {
    const note = await fn();
    console.log(`ok   ${name}${note ? ` (${note})` : ''}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}
function expect(cond, what) {
  if (!cond) throw new Error(what);
}
function faults(...list) {
  return { llmrelay: { provider_options: { faults: list } } };
}

// counted returns an SDK fetch option that counts requests, and the count.
function counted() {
  const c = { n: 0 };
  c.fetch = (...args) => {
    c.n++;
    return fetch(...args);
  };
  return c;
}

const openai = (opts = {}) => new OpenAI({ baseURL: `${base}/v1`, apiKey: key, ...opts });
const anthropic = (opts = {}) => new Anthropic({ baseURL: base, apiKey: key, ...opts });
const user = [{ role: 'user', content: TEXT }];

// A schema the mock answers with a deterministic instance of.
const citySchema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
  required: ['city', 'population'],
  additionalProperties: false,
};

// --- OpenAI ---

await scenario('openai: streamed text, usage in the last chunk', async () => {
  const stream = await openai().chat.completions.create({
    model: MODEL, messages: user, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let usage;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  expect(text === TEXT, `text ${JSON.stringify(text)}`);
  expect(usage && usage.completion_tokens > 0 && usage.total_tokens === usage.prompt_tokens + usage.completion_tokens, `usage ${JSON.stringify(usage)}`);
});

await scenario('openai: text, not streamed', async () => {
  const { data, response } = await openai().chat.completions.create({ model: MODEL, messages: user }).withResponse();
  expect(data.choices[0].message.content === TEXT, `content ${data.choices[0].message.content}`);
  expect(data.choices[0].finish_reason === 'stop', `finish ${data.choices[0].finish_reason}`);
  expect(response.headers.get('llmrelay-provider') === 'mock' && response.headers.get('llmrelay-attempts') === '1', 'llmrelay headers');
  return `x-request-id ${response.headers.get('x-request-id')}`;
});

await scenario('openai: a tool call round trip', async () => {
  const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const first = await openai().chat.completions.create({
    model: MODEL, messages: user, tools,
    ...faults({ output: '', tool_calls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }] }),
  });
  const call = first.choices[0].message.tool_calls?.[0];
  expect(first.choices[0].finish_reason === 'tool_calls' && call?.function.name === 'weather', `first reply ${JSON.stringify(first.choices[0])}`);
  const second = await openai().chat.completions.create({
    model: MODEL, tools,
    messages: [...user, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C' }, { role: 'user', content: 'thanks' }],
  });
  expect(second.choices[0].message.content === 'thanks', `second reply ${second.choices[0].message.content}`);
});

await scenario('openai: a strict tool call from the stream helper, its message sent back as it came', async () => {
  // finalChatCompletion() (like parse()) adds parsed and parsed_arguments
  // to the message an application pushes onto its conversation.
  const tools = [{ type: 'function', function: { name: 'weather', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } }];
  const first = await openai().chat.completions.stream({
    model: MODEL, messages: user, tools,
    ...faults({ output: '', tool_calls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }] }),
  }).finalChatCompletion();
  const message = first.choices[0].message;
  expect(message.tool_calls?.[0]?.function.parsed_arguments?.city === 'Paris', `first reply ${JSON.stringify(message)}`);
  const second = await openai().chat.completions.create({
    model: MODEL, tools,
    messages: [...user, message, { role: 'tool', tool_call_id: 'call_1', content: '18C' }, { role: 'user', content: 'thanks' }],
  });
  expect(second.choices[0].message.content === 'thanks', `second reply ${second.choices[0].message.content}`);
});

await scenario('openai: structured output with response_format json_schema', async () => {
  const r = await openai().chat.completions.create({
    model: MODEL, messages: user,
    response_format: { type: 'json_schema', json_schema: { name: 'city', strict: true, schema: citySchema } },
  });
  const obj = JSON.parse(r.choices[0].message.content);
  expect(typeof obj.city === 'string' && Number.isInteger(obj.population), `object ${r.choices[0].message.content}`);
});

await scenario('openai: parallel_tool_calls false, at most one tool call', async () => {
  const tools = ['weather', 'time'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { city: { type: 'string' } } } } }));
  const twoCalls = faults({ output: '', tool_calls: [
    { id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
    { id: 'call_2', name: 'time', arguments: '{"city":"Paris"}' },
  ] });
  const both = await openai().chat.completions.create({ model: MODEL, messages: user, tools, ...twoCalls });
  expect(both.choices[0].message.tool_calls?.length === 2, `by default ${JSON.stringify(both.choices[0].message)}`);
  const one = await openai().chat.completions.create({ model: MODEL, messages: user, tools, parallel_tool_calls: false, ...twoCalls });
  const calls = one.choices[0].message.tool_calls;
  expect(one.choices[0].finish_reason === 'tool_calls' && calls?.length === 1 && calls[0].function.name === 'weather', `with false ${JSON.stringify(one.choices[0])}`);
});

await scenario('openai: an assistant message with a refusal content part is accepted', async () => {
  const first = await openai().chat.completions.create({ model: MODEL, messages: user, ...faults({ output: '', refusal: 'I cannot help with that.' }) });
  const refusal = first.choices[0].message.refusal;
  expect(refusal === 'I cannot help with that.', `first reply ${JSON.stringify(first.choices[0])}`);
  const second = await openai().chat.completions.create({
    model: MODEL,
    messages: [...user, { role: 'assistant', content: [{ type: 'refusal', refusal }] }, { role: 'user', content: 'thanks' }],
  });
  expect(second.choices[0].message.content === 'thanks', `second reply ${second.choices[0].message.content}`);
  return `refusal ${JSON.stringify(refusal)}`;
});

async function openaiError(fn, want) {
  try {
    await fn();
  } catch (e) {
    expect(e instanceof want.cls, `${e.constructor.name}, want ${want.cls.name}: ${e.message}`);
    expect(e.status === want.status && e.type === want.type, `status ${e.status} type ${e.type}`);
    expect(typeof e.requestID === 'string' && e.requestID.length > 0, `request id ${e.requestID}`);
    return `${e.status} ${e.type} ${e.code}, request ${e.requestID}`;
  }
  throw new Error('no error');
}

await scenario('openai: a bad key is an AuthenticationError', () =>
  openaiError(() => openai({ apiKey: 'sk-wrong' }).chat.completions.create({ model: MODEL, messages: user }),
    { cls: OpenAI.AuthenticationError, status: 401, type: 'authentication_error' }));

await scenario('openai: an unknown model is a NotFoundError', () =>
  openaiError(() => openai().chat.completions.create({ model: 'mock/nope', messages: user }),
    { cls: OpenAI.NotFoundError, status: 404, type: 'not_found_error' }));

await scenario('openai: an exhausted quota is a RateLimitError, insufficient_quota', () =>
  openaiError(() => openai().chat.completions.create({ model: MODEL, messages: user, ...faults({ status: 429, error_type: 'insufficient_quota' }) }),
    { cls: OpenAI.RateLimitError, status: 429, type: 'insufficient_quota' }));

await scenario('openai: the SDK makes one request when llmrelay gave up', async () => {
  const c = counted();
  const note = await openaiError(
    () => openai({ fetch: c.fetch }).chat.completions.create({ model: MODEL, messages: user, ...faults({ status: 503 }, { status: 503 }, { status: 503 }) }),
    { cls: OpenAI.InternalServerError, status: 503, type: 'server_error' });
  expect(c.n === 1, `${c.n} requests`);
  return note;
});

await scenario('openai: a 503 then success streams cleanly', async () => {
  const c = counted();
  const { data: stream, response } = await openai({ fetch: c.fetch }).chat.completions
    .create({ model: MODEL, messages: user, stream: true, ...faults({ status: 503 }, {}) }).withResponse();
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  expect(text === TEXT && c.n === 1, `text ${JSON.stringify(text)} after ${c.n} requests`);
  expect(response.headers.get('llmrelay-attempts') === '2', `llmrelay-attempts ${response.headers.get('llmrelay-attempts')}`);
});

await scenario('openai: a mid-stream failure raises an error', async () => {
  const stream = await openai().chat.completions.create({ model: MODEL, messages: user, stream: true, ...faults({ error_after: 2 }, {}) });
  let text = '';
  try {
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  } catch (e) {
    expect(e instanceof OpenAI.APIError, `${e.constructor.name}`);
    expect(text === 'the quick ', `shown ${JSON.stringify(text)}`);
    return e.message;
  }
  throw new Error(`no error; text ${JSON.stringify(text)}`);
});

await scenario('openai: with llmrelay-midstream: restart, the restart shows and the text is the last attempt\'s', async () => {
  const stream = await openai().chat.completions.create(
    { model: MODEL, messages: user, stream: true, ...faults({ error_after: 2 }, {}) },
    { headers: { 'llmrelay-midstream': 'restart' } });
  let text = '';
  let restarts = 0;
  for await (const chunk of stream) {
    if (chunk.llmrelay?.restart?.discard) {
      restarts++;
      text = '';
    }
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  expect(restarts === 1 && text === TEXT, `${restarts} restarts, text ${JSON.stringify(text)}`);
});

await scenario('openai: responses, streamed text read by the stream helper to its final response', async () => {
  const stream = openai().responses.stream({ model: MODEL, input: TEXT });
  let text = '';
  let last = -1;
  for await (const event of stream) {
    expect(event.sequence_number === last + 1, `sequence_number ${event.sequence_number} after ${last}`);
    last = event.sequence_number;
    if (event.type === 'response.output_text.delta') text += event.delta;
  }
  const response = await stream.finalResponse();
  expect(text === TEXT && response.output_text === TEXT && response.status === 'completed',
    `text ${JSON.stringify(text)}, final ${JSON.stringify(response.output_text)} ${response.status}`);
  expect(response.usage.total_tokens === response.usage.input_tokens + response.usage.output_tokens, `usage ${JSON.stringify(response.usage)}`);
});

await scenario('openai: responses, a function call round trip', async () => {
  const tools = [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
  const first = await openai().responses.create({ model: MODEL, input: TEXT, tools,
    ...faults({ output: '', tool_calls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }] }) });
  const call = first.output.find((item) => item.type === 'function_call');
  expect(call?.call_id === 'call_1' && call.arguments === '{"city":"Paris"}', `output ${JSON.stringify(first.output)}`);
  const second = await openai().responses.create({ model: MODEL, tools,
    input: [{ role: 'user', content: TEXT }, ...first.output, { type: 'function_call_output', call_id: call.call_id, output: '18C' }, { role: 'user', content: 'thanks' }] });
  expect(second.output_text === 'thanks', `second ${JSON.stringify(second.output_text)}`);
});

await scenario('openai: responses, previous_response_id is a BadRequestError', () =>
  openaiError(() => openai().responses.create({ model: MODEL, input: TEXT, previous_response_id: 'resp_1' }),
    { cls: OpenAI.BadRequestError, status: 400, type: 'invalid_request_error' }));

await scenario('openai: responses, a mid-stream failure raises an error', async () => {
  const stream = await openai().responses.create({ model: MODEL, input: TEXT, stream: true, ...faults({ error_after: 2 }, {}) });
  let text = '';
  try {
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
  } catch (e) {
    expect(e instanceof OpenAI.APIError, `${e.constructor.name}`);
    expect(text === 'the quick ', `shown ${JSON.stringify(text)}`);
    return e.message;
  }
  throw new Error(`no error; text ${JSON.stringify(text)}`);
});

await scenario('openai: embeddings, base64 by default, decoded to floats by the SDK', async () => {
  // The SDK asks for base64 unless told otherwise and decodes the float32
  // values itself; the sent body shows which it asked for.
  const sent = [];
  const spy = (url, init) => {
    sent.push(JSON.parse(init.body).encoding_format);
    return fetch(url, init);
  };
  const input = ['the cat sat', 'a dog'];
  const { data: r, response } = await openai({ fetch: spy }).embeddings.create({ model: MODEL, input, dimensions: 4 }).withResponse();
  expect(sent[0] === 'base64', `the SDK asked for ${sent[0]}`);
  expect(r.object === 'list' && r.model === MODEL && r.data.length === input.length, `reply ${JSON.stringify(r)}`);
  for (const [i, d] of r.data.entries()) {
    const norm = d.embedding.reduce((sum, x) => sum + x * x, 0);
    expect(d.object === 'embedding' && d.index === i && Array.isArray(d.embedding) && d.embedding.length === 4 &&
      Math.abs(norm - 1) < 1e-5, `data[${i}] ${JSON.stringify(d)}`);
  }
  // The mock counts a token per word.
  expect(r.usage.prompt_tokens === 5 && r.usage.total_tokens === 5, `usage ${JSON.stringify(r.usage)}`);
  expect(response.headers.get('llmrelay-provider') === 'mock' && response.headers.get('llmrelay-attempts') === '1', 'llmrelay headers');
  // The same vectors as floats: the base64 decoded to the values the float
  // encoding prints.
  const floats = await openai().embeddings.create({ model: MODEL, input, dimensions: 4, encoding_format: 'float' });
  const same = floats.data.every((d, i) => d.embedding.every((x, j) => Math.abs(x - r.data[i].embedding[j]) < 1e-6));
  expect(same, `float ${JSON.stringify(floats.data)}, base64 ${JSON.stringify(r.data)}`);
  return `${r.data.length} vectors of ${r.data[0].embedding.length}, ${r.usage.prompt_tokens} tokens`;
});

// --- Anthropic ---

await scenario('anthropic: streamed text, usage in message_delta', async () => {
  const stream = anthropic().messages.stream({ model: MODEL, max_tokens: 256, messages: user });
  let text = '';
  stream.on('text', (t) => { text += t; });
  const msg = await stream.finalMessage();
  expect(text === TEXT && msg.content[0].text === TEXT, `text ${JSON.stringify(text)}`);
  expect(msg.usage.output_tokens > 0 && msg.stop_reason === 'end_turn', `usage ${JSON.stringify(msg.usage)} stop ${msg.stop_reason}`);
});

await scenario('anthropic: text, not streamed', async () => {
  const { data, response } = await anthropic().messages.create({ model: MODEL, max_tokens: 256, messages: user }).withResponse();
  expect(data.content[0].text === TEXT, `content ${JSON.stringify(data.content)}`);
  return `request-id ${response.headers.get('request-id')}`;
});

await scenario('anthropic: a tool use round trip', async () => {
  const tools = [{ name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
  const first = await anthropic().messages.create({
    model: MODEL, max_tokens: 256, messages: user, tools,
    ...faults({ output: '', tool_calls: [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' }] }),
  });
  const use = first.content.find((b) => b.type === 'tool_use');
  expect(first.stop_reason === 'tool_use' && use?.input?.city === 'Paris', `first reply ${JSON.stringify(first)}`);
  const second = await anthropic().messages.create({
    model: MODEL, max_tokens: 256, tools,
    messages: [...user, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C' }, { type: 'text', text: 'thanks' }] }],
  });
  expect(second.content[0].text === 'thanks', `second reply ${JSON.stringify(second.content)}`);
});

await scenario('anthropic: a Gemini 3 tool loop, the reply\'s content sent back as it came', async () => {
  // Gemini 3 answers 400 when the function call comes back without its
  // thought signature; llmrelay carries it in a thinking block, which the
  // application's usual loop sends back with the tool_use.
  const tools = [{ name: 'get_country', input_schema: { type: 'object', properties: {} } }];
  const ask = [{ role: 'user', content: 'What is the capital of the user country? Call the tool' }];
  for (const streamed of [false, true]) {
    const params = { model: GEMINI, max_tokens: 256, messages: ask, tools };
    const first = streamed ? await anthropic().messages.stream(params).finalMessage() : await anthropic().messages.create(params);
    const use = first.content.find((b) => b.type === 'tool_use');
    expect(first.stop_reason === 'tool_use' && use?.name === 'get_country', `first reply ${JSON.stringify(first)}`);
    const second = await anthropic().messages.create({
      ...params,
      messages: [...ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'France' }] }],
    });
    expect(second.content.find((b) => b.type === 'text')?.text === 'Paris', `second reply ${JSON.stringify(second.content)}`);
  }
});

await scenario('anthropic: structured output with output_config.format', async () => {
  const r = await anthropic().messages.create({
    model: MODEL, max_tokens: 256, messages: user, output_config: { format: { type: 'json_schema', schema: citySchema } },
  });
  const obj = JSON.parse(r.content[0].text);
  expect(typeof obj.city === 'string' && Number.isInteger(obj.population), `object ${r.content[0].text}`);
});

async function anthropicError(fn, want) {
  try {
    await fn();
  } catch (e) {
    expect(e instanceof want.cls, `${e.constructor.name}, want ${want.cls.name}: ${e.message}`);
    expect(e.status === want.status && e.error?.error?.type === want.type, `status ${e.status} type ${e.error?.error?.type}`);
    expect(typeof e.requestID === 'string' && e.requestID.length > 0, `request id ${e.requestID}`);
    expect(!want.reason || e.error?.llmrelay?.reason === want.reason, `reason ${e.error?.llmrelay?.reason}, want ${want.reason}`);
    return `${e.status} ${e.error.error.type}, request ${e.requestID}`;
  }
  throw new Error('no error');
}

await scenario('anthropic: a bad key is an AuthenticationError', () =>
  anthropicError(() => anthropic({ apiKey: 'sk-wrong' }).messages.create({ model: MODEL, max_tokens: 9, messages: user }),
    { cls: Anthropic.AuthenticationError, status: 401, type: 'authentication_error' }));

await scenario('anthropic: an unknown model is a NotFoundError', () =>
  anthropicError(() => anthropic().messages.create({ model: 'mock/nope', max_tokens: 9, messages: user }),
    { cls: Anthropic.NotFoundError, status: 404, type: 'not_found_error' }));

await scenario('anthropic: an exhausted quota is a billing_error', () =>
  anthropicError(() => anthropic().messages.create({ model: MODEL, max_tokens: 9, messages: user, ...faults({ status: 429, error_type: 'insufficient_quota' }) }),
    { cls: Anthropic.APIError, status: 402, type: 'billing_error' }));

await scenario('anthropic: the SDK makes one request when llmrelay gave up', async () => {
  const c = counted();
  const note = await anthropicError(
    () => anthropic({ fetch: c.fetch }).messages.create({ model: MODEL, max_tokens: 9, messages: user, ...faults({ status: 503 }, { status: 503 }, { status: 503 }) }),
    { cls: Anthropic.InternalServerError, status: 529, type: 'overloaded_error' });
  expect(c.n === 1, `${c.n} requests`);
  return note;
});

await scenario('anthropic: a 503 then success streams cleanly', async () => {
  const c = counted();
  const stream = anthropic({ fetch: c.fetch }).messages.stream({ model: MODEL, max_tokens: 256, messages: user, ...faults({ status: 503 }, {}) });
  const msg = await stream.finalMessage();
  expect(msg.content.length === 1 && msg.content[0].text === TEXT && c.n === 1, `content ${JSON.stringify(msg.content)} after ${c.n} requests`);
});

await scenario('anthropic: a mid-stream failure raises an error', async () => {
  const stream = anthropic().messages.stream({ model: MODEL, max_tokens: 256, messages: user, ...faults({ error_after: 2 }, {}) });
  let text = '';
  stream.on('text', (t) => { text += t; });
  try {
    await stream.finalMessage();
  } catch (e) {
    expect(e instanceof Anthropic.APIError, `${e.constructor.name}`);
    expect(text === 'the quick ', `shown ${JSON.stringify(text)}`);
    return e.message;
  }
  throw new Error(`no error; text ${JSON.stringify(text)}`);
});

await scenario('anthropic: with llmrelay-midstream: restart, the restart shows and the text is the last attempt\'s', async () => {
  const stream = await anthropic().messages.create(
    { model: MODEL, max_tokens: 256, messages: user, stream: true, ...faults({ error_after: 2 }, {}) },
    { headers: { 'llmrelay-midstream': 'restart' } });
  let text = '';
  let restarts = 0;
  for await (const ev of stream) {
    if (ev.llmrelay?.restart?.discard) {
      restarts++;
      text = '';
    }
    if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
  }
  expect(restarts === 1 && text === TEXT, `${restarts} restarts, text ${JSON.stringify(text)}`);
});

await scenario('anthropic: tool_choice disable_parallel_tool_use, at most one tool use', async () => {
  const tools = ['weather', 'time'].map((name) => ({ name, input_schema: { type: 'object', properties: { city: { type: 'string' } } } }));
  const r = await anthropic().messages.create({
    model: MODEL, max_tokens: 256, messages: user, tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    ...faults({ output: '', tool_calls: [
      { id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' },
      { id: 'toolu_2', name: 'time', arguments: '{"city":"Paris"}' },
    ] }),
  });
  const uses = r.content.filter((b) => b.type === 'tool_use');
  expect(r.stop_reason === 'tool_use' && uses.length === 1 && uses[0].name === 'weather', `reply ${JSON.stringify(r)}`);
});

await scenario('anthropic: countTokens at an anthropic provider', async () => {
  // The upstream counts for claude-up only, the model's name at its provider.
  const { data, response } = await anthropic().messages
    .countTokens({ model: CLAUDE, system: 'Be brief.', messages: user }).withResponse();
  expect(data.input_tokens === 11, `count ${JSON.stringify(data)}, want 11 (2 + 9 words)`);
  expect(response.headers.get('llmrelay-provider') === 'claude', `llmrelay-provider ${response.headers.get('llmrelay-provider')}`);
});

await scenario('anthropic: countTokens on a mock model is a NotFoundError, TOKEN_COUNTING_NOT_SUPPORTED', () =>
  anthropicError(() => anthropic().messages.countTokens({ model: MODEL, messages: user }),
    { cls: Anthropic.NotFoundError, status: 404, type: 'not_found_error', reason: 'TOKEN_COUNTING_NOT_SUPPORTED' }));

await scenario('anthropic: stop_sequences, the reply stops at one', async () => {
  const params = { model: CLAUDE, max_tokens: 256, messages: user, stop_sequences: ['lazy', 'brown'] };
  const whole = await anthropic().messages.create(params);
  const streamed = await anthropic().messages.stream(params).finalMessage();
  const wrong = [['not streamed', whole], ['streamed', streamed]]
    .filter(([, msg]) => !(msg.stop_reason === 'stop_sequence' && msg.stop_sequence === 'brown' && msg.content[0]?.text === 'the quick '))
    .map(([how, msg]) => `${how}: stop ${msg.stop_reason} ${JSON.stringify(msg.stop_sequence)}, content ${JSON.stringify(msg.content)}`);
  expect(wrong.length === 0, wrong.join('; '));
  const plain = await anthropic().messages.create({ ...params, stop_sequences: ['cat'] });
  expect(plain.stop_reason === 'end_turn' && plain.stop_sequence === null, `no match: stop ${plain.stop_reason} ${JSON.stringify(plain.stop_sequence)}`);
});

// messageStart returns the usage of a stream's message_start (a copy: the
// SDK's stream helper updates that message as later events come) and of the
// final message.
async function messageStart(model) {
  const stream = anthropic().messages.stream({ model, max_tokens: 256, messages: user });
  let start;
  for await (const ev of stream) if (ev.type === 'message_start') start = structuredClone(ev.message.usage);
  return { start, final: (await stream.finalMessage()).usage };
}

await scenario('anthropic: message_start has the prompt\'s tokens an anthropic provider reported', async () => {
  const { start, final } = await messageStart(CLAUDE);
  expect(start?.input_tokens === 9 && start.output_tokens === 0, `message_start usage ${JSON.stringify(start)}`);
  expect(final.input_tokens === 9 && final.output_tokens === 9, `final usage ${JSON.stringify(final)}`);
});

await scenario('anthropic: message_start says 0 behind the mock, which reports usage at its end', async () => {
  const { start, final } = await messageStart(MODEL);
  expect(start?.input_tokens === 0 && start.output_tokens === 0, `message_start usage ${JSON.stringify(start)}`);
  expect(final.input_tokens === 9 && final.output_tokens === 9, `final usage ${JSON.stringify(final)}`);
});

// Images through each door to the anthropic provider: the upstream gets
// each in Anthropic's format, a base64 image block among the message's
// text blocks in the order the client wrote them, and echoes the text.

// A 1×1 PNG, and the same as the data: URL OpenAI's formats take.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PNG_URL = `data:image/png;base64,${PNG}`;

// upstreamGot checks that the upstream's last request whose user message
// has the text `text` carries the PNG, in Anthropic's format, in that
// message, its blocks of the types `order` in that order.
async function upstreamGot(text, order) {
  const res = await fetch(`${upstream}/recorded`, { headers: { 'x-api-key': upstreamKey } });
  expect(res.ok, `GET /recorded: ${res.status}`);
  const messages = (await res.json()).flatMap((body) => body.messages ?? [])
    .filter((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'text' && b.text === text));
  expect(messages.length > 0, `no upstream request has a user message with the text ${JSON.stringify(text)}`);
  const m = messages.at(-1);
  const image = m.content.find((b) => b.type === 'image');
  expect(m.content.map((b) => b.type).join(',') === order.join(','), `blocks ${m.content.map((b) => b.type)}, want ${order}`);
  expect(image.source?.type === 'base64' && image.source.media_type === 'image/png' && image.source.data === PNG,
    `image block ${JSON.stringify(image)}`);
}

await scenario('openai: an image_url data: URL reaches an anthropic provider as a base64 image block', async () => {
  const text = 'what is in this image (chat)?';
  const r = await openai().chat.completions.create({
    model: CLAUDE,
    messages: [{ role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url: PNG_URL, detail: 'low' } }] }],
  });
  expect(r.choices[0].message.content === text && r.choices[0].finish_reason === 'stop', `reply ${JSON.stringify(r.choices[0])}`);
  await upstreamGot(text, ['text', 'image']);
});

await scenario('openai: responses, an input_image reaches an anthropic provider as a base64 image block', async () => {
  const text = 'what is in this image (responses)?';
  const r = await openai().responses.create({
    model: CLAUDE,
    input: [{ role: 'user', content: [{ type: 'input_text', text }, { type: 'input_image', image_url: PNG_URL, detail: 'auto' }] }],
  });
  expect(r.output_text === text && r.status === 'completed', `reply ${JSON.stringify(r.output)} ${r.status}`);
  await upstreamGot(text, ['text', 'image']);
});

await scenario('anthropic: a base64 image block reaches an anthropic provider as it was sent', async () => {
  const text = 'what is in this image (messages)?';
  const r = await anthropic().messages.create({
    model: CLAUDE, max_tokens: 256,
    messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }, { type: 'text', text }] }],
  });
  expect(r.content[0]?.text === text && r.stop_reason === 'end_turn', `reply ${JSON.stringify(r)}`);
  await upstreamGot(text, ['image', 'text']);
});

// The SDKs' timeout bounds the wait for the response, not the stream that
// follows: they send it (X-Stainless-Timeout, whole seconds), and a stream
// longer than it is read to its end, as from OpenAI's or Anthropic's API.
const slowWords = 6; // 6 × 300 ms, past the timeout of one second
const slow = { llmrelay: { provider_options: { chunk_delay_ms: 300, words: slowWords } } };

await scenario('openai: a stream longer than the request timeout is read to its end', async () => {
  const stream = await openai().chat.completions.create(
    { model: 'mock/lorem', messages: user, stream: true, ...slow }, { timeout: 1000, maxRetries: 0 });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  expect(text.split(' ').length === slowWords, `text ${JSON.stringify(text)}`);
});

await scenario('anthropic: a stream longer than the request timeout is read to its end', async () => {
  const msg = await anthropic({ timeout: 1000, maxRetries: 0 }).messages
    .stream({ model: 'mock/lorem', max_tokens: 256, messages: user, ...slow }).finalMessage();
  expect(msg.stop_reason === 'end_turn' && msg.content[0]?.text.split(' ').length === slowWords, `message ${JSON.stringify(msg)}`);
});

await scenario('anthropic: GET /v1/models in Anthropic\'s shape', async () => {
  const ids = [];
  for await (const m of anthropic().models.list()) ids.push(m.id);
  expect(ids.includes(MODEL), `models ${ids}`);
});

await scenario('openai: GET /v1/models', async () => {
  const ids = [];
  for await (const m of openai().models.list()) ids.push(m.id);
  expect(ids.includes(MODEL), `models ${ids}`);
});

process.exit(failures);
