/**
 * Fake vendor servers for tests: real sockets on 127.0.0.1, each vendor's own wire format.
 *
 *   const fake = await startFakeOpenAI();            // also startFakeAnthropic/Gemini/Azure()
 *   fake.baseUrl       // what the router needs: PROVIDER_BASE_URL_<ID> or a connection endpoint
 *   fake.apiKey        // the only key it accepts (option `apiKey`, default 'test-key-<vendor>')
 *   fake.requests      // every request received: { method, path, query, headers, body, rawBody, clientClosed }
 *   fake.script(step, ...more)   // queue behaviours, one per request; then it echoes again
 *   fake.setDefault(step | null) // behaviour for every unscripted request (null: echo)
 *   fake.reset()       // forget requests and queued steps (and the model list, see below)
 *   fake.setModels(ids | null)   // what GET on the vendor's model list answers (null: 404, the default)
 *   await fake.close()
 *
 * Default behaviour (echo): the reply text is `echo: <text of the last user message>`;
 * usage is prompt = characters of all message text (system included), completion = characters
 * of the reply, total = their sum. Requests with a wrong path, missing/wrong key or missing
 * required fields get the vendor's own 4xx error body, exactly like the real API would.
 *
 * Steps (Script): reply (scripted content/finish/usage, optionally after delayMs), tool-call (the model calls tools, in the
 * vendor's own form: OpenAI tool_calls, Anthropic tool_use blocks, Gemini functionCall parts), error (status with the vendor's error
 * body, optional retry-after), delay (wait, then echo), hold (echo once the test's promise settles), reset (TCP reset, no response),
 * malformed (200 with invalid JSON), wrong-shape (200, valid JSON, not the vendor's shape),
 * redirect (3xx with Location), raw (anything), greedy (echo, but reports as many completion tokens
 * as the request allowed: its max_tokens, or 1,000,000 when it set none).
 *
 * Streaming requests (`stream: true`; Gemini's `:streamGenerateContent?alt=sse`) get the answer
 * as the vendor's own event stream (test/fakes/vendor-streams.ts); reply, tool-call, echo and
 * delay steps stream. Stream faults: stream-die (the socket dies after `after` events),
 * stream-error (the vendor's in-stream error event after `after` events), stream-malformed (an
 * event that is not JSON after `after`), stream-slow (the answer with `intervalMs` between
 * events), stream-long (`chunks` text events, optionally `intervalMs` apart), stream-linger (every
 * event, [DONE] included, then the body left open until the test's promise settles). The fake waits for
 * 'drain' like a real server, so a reader that stops reading stalls it; `streamedEvents` counts
 * the events it managed to write.
 *
 * Embeddings and token counting (test/fakes/vendor-embeddings.ts), in each vendor's format:
 * OpenAI `POST /v1/embeddings`, Azure `/openai/deployments/{d}/embeddings`, Gemini
 * `:batchEmbedContents`, Anthropic `POST /v1/messages/count_tokens`; error, reset, delay and
 * wrong-shape steps apply to them as to chat.
 *
 * Base URLs: OpenAI-compatible `${url}/v1` (path /v1/chat/completions); Anthropic `${url}`
 * (/v1/messages); Gemini `${url}` (/v1beta/models/{model}:generateContent); Azure `${url}`
 * (/openai/deployments/{deployment}/chat/completions?api-version=...).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicCount, checkAnthropicCount, checkGeminiBatch, checkOpenAIEmbeddings, geminiEmbeddings, openAIEmbeddingList } from './vendor-embeddings.js';
import { anthropicStreamError, anthropicStreamEvents, geminiStreamError, geminiStreamEvents, openAIStreamError, openAIStreamEvents } from './vendor-streams.js';

export type Script =
  | { kind: 'reply'; content: string; finish?: string; usage?: { prompt: number; completion: number }; delayMs?: number }
  | { kind: 'tool-call'; calls: FakeToolCall[]; content?: string }
  | { kind: 'error'; status: number; message?: string; retryAfter?: string }
  | { kind: 'delay'; ms: number }
  | { kind: 'hold'; until: Promise<unknown> }
  | { kind: 'greedy' }
  | { kind: 'reset' }
  | { kind: 'malformed' }
  | { kind: 'wrong-shape' }
  | { kind: 'redirect'; location: string; status?: number }
  | { kind: 'raw'; status: number; body: string; headers?: Record<string, string> }
  | { kind: 'stream-die'; after: number }
  | { kind: 'stream-error'; after: number; message?: string }
  | { kind: 'stream-malformed'; after: number }
  | { kind: 'stream-slow'; intervalMs: number; content?: string }
  | { kind: 'stream-long'; chunks: number; intervalMs?: number }
  | { kind: 'stream-linger'; until: Promise<unknown> };

/** A tool call the fake model makes; `id` is left out by Gemini unless given. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body, or undefined when it was not JSON. */
  body: any;
  rawBody: string;
  /** Set when the client closed the connection before the response was complete (an abort). */
  clientClosed: boolean;
  /** Date.now() when the whole answer had been written out. */
  answeredAt?: number;
  /** Date.now() when the caller closed the connection before the answer was complete. */
  abortedAt?: number;
  /** A streaming request: the events written so far. */
  streamedEvents: number;
}

export interface FakeVendor {
  readonly vendor: 'openai' | 'anthropic' | 'gemini' | 'azure';
  /** http://127.0.0.1:<port>, no path. */
  readonly url: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly requests: RecordedRequest[];
  script(...steps: Script[]): void;
  setDefault(step: Script | null): void;
  setModels(ids: string[] | null): void;
  reset(): void;
  close(): Promise<void>;
}

export interface FakeOptions {
  apiKey?: string;
}

interface Reply {
  content: string;
  finish: string | undefined;
  calls?: FakeToolCall[];
  prompt: number;
  completion: number;
}

interface Dialect {
  vendor: FakeVendor['vendor'];
  basePath: string;
  /** Returns an error [status, message] when the request is not what the real API accepts, else null. */
  check(req: RecordedRequest, apiKey: string): { status: number; message: string; detail?: string } | null;
  /** Texts of all messages (for usage) and of the last user message (for the echo). */
  texts(body: any): { all: string[]; lastUser: string };
  success(reply: Reply, req: RecordedRequest, n: number): unknown;
  error(status: number, message: string, detail?: string): unknown;
  requestIdHeader: string;
  /** The vendor's model list: its path and its body for the given ids. */
  modelsPath: string;
  modelList(ids: string[]): unknown;
  /** Whether the request carries the right key, as the vendor checks it. */
  authorized(req: RecordedRequest, apiKey: string): boolean;
  /** Whether the request asks for a stream. */
  streams(req: RecordedRequest): boolean;
  streamEvents(reply: Reply, req: RecordedRequest, n: number): string[];
  streamError(message: string): string;
  /** Endpoints besides chat (embeddings, token counting), each in the vendor's own wire format. */
  extra?: ExtraEndpoint[];
}

/** A non-chat endpoint of a fake: scripted error, reset and delay steps apply to it as to chat. */
interface ExtraEndpoint {
  matches(req: RecordedRequest): boolean;
  check(req: RecordedRequest, apiKey: string): { status: number; message: string; detail?: string } | null;
  success(req: RecordedRequest): unknown;
}

// ---------------------------------------------------------------- shared plumbing

async function startFake(dialect: Dialect, options: FakeOptions): Promise<FakeVendor> {
  const apiKey = options.apiKey ?? `test-key-${dialect.vendor}`;
  const requests: RecordedRequest[] = [];
  let queue: Script[] = [];
  let fallback: Script | null = null;
  let models: string[] | null = null;
  let counter = 0;

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    let body: any;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      rawBody,
      clientClosed: false,
      streamedEvents: 0,
    };
    requests.push(recorded);
    res.on('finish', () => (recorded.answeredAt = Date.now()));
    res.on('close', () => {
      if (!res.writableFinished) {
        recorded.clientClosed = true;
        recorded.abortedAt = Date.now();
      }
    });
    const n = ++counter;
    res.setHeader(dialect.requestIdHeader, `req_fake_${n}`);

    if (req.method === 'GET' && recorded.path === dialect.modelsPath && models !== null) {
      if (!dialect.authorized(recorded, apiKey)) return sendJson(res, 401, dialect.error(401, 'invalid key'));
      return sendJson(res, 200, dialect.modelList(models));
    }
    const extra = dialect.extra?.find((e) => e.matches(recorded));
    if (extra) return answerExtra(extra, recorded, apiKey, res, req);
    const problem = dialect.check(recorded, apiKey);
    if (problem) return sendJson(res, problem.status, dialect.error(problem.status, problem.message, problem.detail));

    const step = queue.shift() ?? fallback;
    const echo = (): Reply => {
      const { all, lastUser } = dialect.texts(body);
      const content = `echo: ${lastUser}`;
      return { content, finish: undefined, prompt: all.join('').length, completion: content.length };
    };
    const streaming = dialect.streams(recorded);
    const answer = (reply: Reply, intervalMs = 0) =>
      streaming ? void sendStream(res, recorded, dialect.streamEvents(reply, recorded, n), intervalMs) : sendJson(res, 200, dialect.success(reply, recorded, n));
    if (!step) return answer(echo());
    if (streaming && step.kind.startsWith('stream-')) {
      const events = dialect.streamEvents(step.kind === 'stream-long' ? textReply('abcd'.repeat(step.chunks)) : step.kind === 'stream-slow' && step.content !== undefined ? textReply(step.content) : echo(), recorded, n);
      switch (step.kind) {
        // Faults come 20 ms apart from the events before them, so a client has seen those first.
        case 'stream-die':
          return void sendStream(res, recorded, events.slice(0, step.after), 20, () => setTimeout(() => req.socket.destroy(), 30));
        case 'stream-error':
          return void sendStream(res, recorded, [...events.slice(0, step.after), dialect.streamError(step.message ?? 'fake stream error')], 20);
        case 'stream-malformed':
          return void sendStream(res, recorded, [...events.slice(0, step.after), 'data: {"choices": [\n\n'], 20);
        case 'stream-slow':
          return void sendStream(res, recorded, events, step.intervalMs);
        case 'stream-long':
          return void sendStream(res, recorded, events, step.intervalMs ?? 0);
        case 'stream-linger':
          return void sendStream(res, recorded, events, 0, () => void step.until.finally(() => res.end()));
      }
    }
    switch (step.kind) {
      case 'reply': {
        const send = () => answer({
          content: step.content,
          finish: step.finish,
          prompt: step.usage?.prompt ?? 0,
          completion: step.usage?.completion ?? step.content.length,
        });
        if (!step.delayMs) return send();
        const timer = setTimeout(send, step.delayMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      case 'tool-call':
        return answer({
          content: step.content ?? '',
          finish: undefined,
          calls: step.calls,
          prompt: 0,
          completion: 1,
        });
      case 'error':
        if (step.retryAfter !== undefined) res.setHeader('retry-after', step.retryAfter);
        return sendJson(res, step.status, dialect.error(step.status, step.message ?? `fake ${dialect.vendor} error ${step.status}`));
      case 'delay': {
        const timer = setTimeout(() => answer(echo()), step.ms);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      case 'hold': {
        const send = () => {
          if (!res.destroyed) sendJson(res, 200, dialect.success(echo(), recorded, n));
        };
        void step.until.then(send, send);
        return;
      }
      case 'greedy':
        return sendJson(res, 200, dialect.success({ ...echo(), completion: requestedMaxTokens(body) ?? 1_000_000 }, recorded, n));
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'malformed':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "broken", "choices": [');
        return;
      case 'wrong-shape':
        return sendJson(res, 200, { hello: 'world' });
      case 'redirect':
        res.writeHead(step.status ?? 302, { location: step.location });
        res.end();
        return;
      case 'raw':
        res.writeHead(step.status, step.headers ?? {});
        res.end(step.body);
        return;
      default:
        return answer(echo());
    }
  });
  function answerExtra(extra: ExtraEndpoint, recorded: RecordedRequest, key: string, res: ServerResponse, req: IncomingMessage): void {
    const problem = extra.check(recorded, key);
    if (problem) return sendJson(res, problem.status, dialect.error(problem.status, problem.message, problem.detail));
    const step = queue.shift() ?? fallback;
    if (step?.kind === 'error') {
      if (step.retryAfter !== undefined) res.setHeader('retry-after', step.retryAfter);
      return sendJson(res, step.status, dialect.error(step.status, step.message ?? `fake ${dialect.vendor} error ${step.status}`));
    }
    if (step?.kind === 'reset') return void req.socket.resetAndDestroy();
    if (step?.kind === 'wrong-shape') return sendJson(res, 200, { hello: 'world' });
    if (step?.kind === 'delay') {
      const timer = setTimeout(() => sendJson(res, 200, extra.success(recorded)), step.ms);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    return sendJson(res, 200, extra.success(recorded));
  }

  // Longer than any test: an idle socket closed just as the client reuses it fails a call for nothing.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    vendor: dialect.vendor,
    url,
    baseUrl: url + dialect.basePath,
    apiKey,
    requests,
    script: (...steps) => void queue.push(...steps),
    setDefault: (step) => void (fallback = step),
    setModels: (ids) => void (models = ids),
    reset: () => {
      requests.length = 0;
      queue = [];
      fallback = null;
      models = null;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The output cap a request set, in whichever field its vendor reads. */
function requestedMaxTokens(body: any): number | undefined {
  return body?.max_tokens ?? body?.max_completion_tokens ?? body?.generationConfig?.maxOutputTokens;
}

const textReply = (content: string): Reply => ({ content, finish: undefined, prompt: 10, completion: Math.ceil(content.length / 4) });

/** Writes the events as a real server does: waiting for 'drain' when the reader is slow. `fault` replaces the end. */
async function sendStream(res: ServerResponse, recorded: RecordedRequest, events: string[], intervalMs: number, fault?: () => void): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (res.destroyed) return;
    if (intervalMs > 0) await new Promise((resolve) => setTimeout(resolve, intervalMs));
    if (res.destroyed) return;
    const flowing = res.write(event);
    recorded.streamedEvents++;
    if (!flowing) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    }
  }
  if (fault) fault();
  else res.end();
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function openAITexts(body: any): { all: string[]; lastUser: string } {
  const all: string[] = [];
  let lastUser = '';
  for (const m of body.messages as any[]) {
    const text = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? (m.content as any[]).filter((p) => p.type === 'text').map((p) => p.text).join('') : '';
    all.push(text);
    if (m.role === 'user') lastUser = text;
  }
  return { all, lastUser };
}

function checkOpenAIBody(body: any, needModel: boolean): string | null {
  if (!isObj(body)) return 'We could not parse the JSON body of your request.';
  if (needModel && typeof body.model !== 'string') return "you must provide a model parameter";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "Invalid 'messages': empty array.";
  for (const m of body.messages) {
    if (!isObj(m) || !['system', 'user', 'assistant', 'developer', 'tool'].includes(m.role)) return "Invalid value for 'messages[].role'.";
    const bareCall = m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    if (typeof m.content !== 'string' && !Array.isArray(m.content) && !(bareCall && (m.content === null || m.content === undefined))) {
      return "Invalid type for 'messages[].content'.";
    }
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') return "Missing required parameter: 'messages[].tool_call_id'.";
  }
  if ('max_tokens' in body && !Number.isInteger(body.max_tokens)) return "Invalid type for 'max_tokens'.";
  return null;
}

function openAISuccess(reply: Reply, model: string, n: number, choices = 1) {
  const message = reply.calls
    ? {
        role: 'assistant',
        content: reply.content || null,
        refusal: null,
        tool_calls: reply.calls.map((c, i) => ({ id: c.id ?? `call_fake_${n}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
      }
    : { role: 'assistant', content: reply.content, refusal: null };
  return {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000 + n,
    model,
    // n > 1: the same answer once per choice, each with its index.
    choices: Array.from({ length: choices }, (_, index) => ({ index, message, logprobs: null, finish_reason: reply.finish ?? (reply.calls ? 'tool_calls' : 'stop') })),
    usage: { prompt_tokens: reply.prompt, completion_tokens: reply.completion, total_tokens: reply.prompt + reply.completion },
  };
}

// ---------------------------------------------------------------- OpenAI-compatible

const openAIDialect: Dialect = {
  vendor: 'openai',
  basePath: '/v1',
  requestIdHeader: 'x-request-id',
  check(req, apiKey) {
    if (req.method !== 'POST' || req.path !== '/v1/chat/completions') {
      return { status: 404, message: `Invalid URL (${req.method} ${req.path})` };
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return { status: 401, message: 'Incorrect API key provided.', detail: 'invalid_api_key' };
    }
    const problem = checkOpenAIBody(req.body, true);
    return problem ? { status: 400, message: problem } : null;
  },
  texts: openAITexts,
  success: (reply, req, n) => openAISuccess(reply, req.body.model, n, req.body.n ?? 1),
  modelsPath: '/v1/models',
  modelList: (ids) => ({ object: 'list', data: ids.map((id, i) => ({ id, object: 'model', created: 1_700_000_000 + i, owned_by: 'fake' })) }),
  authorized: (req, apiKey) => req.headers.authorization === `Bearer ${apiKey}`,
  streams: (req) => req.body?.stream === true,
  streamEvents: (reply, req, n) => openAIStreamEvents(reply, req.body.model, n, req.body),
  streamError: openAIStreamError,
  extra: [{
    matches: (req) => req.method === 'POST' && req.path === '/v1/embeddings',
    check: (req, apiKey) => (req.headers.authorization !== `Bearer ${apiKey}` ? { status: 401, message: 'Incorrect API key provided.', detail: 'invalid_api_key' } : checkOpenAIEmbeddings(req.body, true)),
    success: (req) => openAIEmbeddingList(req.body, req.body.model),
  }],
  error: (status, message, detail) => ({
    error: { message, type: status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: detail ?? null },
  }),
};

// ---------------------------------------------------------------- Azure OpenAI

const azureDialect: Dialect = {
  vendor: 'azure',
  basePath: '',
  requestIdHeader: 'apim-request-id',
  check(req, apiKey) {
    const match = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(req.path);
    if (req.method !== 'POST' || !match || !req.query['api-version']) return { status: 404, message: 'Resource not found' };
    if (req.headers['api-key'] !== apiKey) {
      return { status: 401, message: 'Access denied due to invalid subscription key or wrong API endpoint.' };
    }
    const problem = checkOpenAIBody(req.body, false);
    return problem ? { status: 400, message: problem } : null;
  },
  texts: openAITexts,
  success: (reply, req, n) => openAISuccess(reply, decodeURIComponent(req.path.split('/')[3]!), n, req.body.n ?? 1),
  modelsPath: '/openai/models',
  modelList: (ids) => ({ data: ids.map((id) => ({ id, object: 'model', created_at: 1_700_000_000 })) }),
  authorized: (req, apiKey) => req.headers['api-key'] === apiKey,
  streams: (req) => req.body?.stream === true,
  streamEvents: (reply, req, n) => openAIStreamEvents(reply, decodeURIComponent(req.path.split('/')[3]!), n, req.body),
  streamError: openAIStreamError,
  extra: [{
    matches: (req) => req.method === 'POST' && /^\/openai\/deployments\/[^/]+\/embeddings$/.test(req.path) && !!req.query['api-version'],
    check: (req, apiKey) => (req.headers['api-key'] !== apiKey ? { status: 401, message: 'Access denied due to invalid subscription key or wrong API endpoint.' } : checkOpenAIEmbeddings(req.body, false)),
    success: (req) => openAIEmbeddingList(req.body, decodeURIComponent(req.path.split('/')[3]!)),
  }],
  error: (status, message) => ({ error: { code: String(status), message } }),
};

// ---------------------------------------------------------------- Anthropic Messages

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error',
};

const anthropicDialect: Dialect = {
  vendor: 'anthropic',
  basePath: '',
  requestIdHeader: 'request-id',
  check(req, apiKey) {
    if (req.method !== 'POST' || req.path !== '/v1/messages') return { status: 404, message: 'Not found' };
    if (req.headers['x-api-key'] !== apiKey) return { status: 401, message: 'invalid x-api-key' };
    if (!req.headers['anthropic-version']) return { status: 400, message: 'anthropic-version: header is required' };
    const body = req.body;
    if (!isObj(body)) return { status: 400, message: 'Request body must be JSON' };
    if (typeof body.model !== 'string') return { status: 400, message: 'model: Field required' };
    if (!Number.isInteger(body.max_tokens)) return { status: 400, message: 'max_tokens: Field required' };
    if (!Array.isArray(body.messages) || body.messages.length === 0) return { status: 400, message: 'messages: at least one message is required' };
    if ('system' in body && typeof body.system !== 'string' && !Array.isArray(body.system)) return { status: 400, message: 'system: Input should be a valid string' };
    for (const [i, m] of (body.messages as any[]).entries()) {
      if (m.role !== 'user' && m.role !== 'assistant') return { status: 400, message: `messages.${i}.role: Input should be 'user' or 'assistant'` };
      if (typeof m.content === 'string') continue;
      if (!Array.isArray(m.content)) return { status: 400, message: `messages.${i}.content: Input should be a valid list` };
      for (const block of m.content) {
        const ok =
          (block.type === 'text' && typeof block.text === 'string') ||
          (block.type === 'tool_use' && m.role === 'assistant' && typeof block.id === 'string' && typeof block.name === 'string' && isObj(block.input)) ||
          (block.type === 'tool_result' && m.role === 'user' && typeof block.tool_use_id === 'string') ||
          (block.type === 'document' && isObj(block.source) && block.source.type === 'base64' && typeof block.source.data === 'string') ||
          (block.type === 'image' && isObj(block.source) &&
            ((block.source.type === 'base64' && typeof block.source.media_type === 'string' && typeof block.source.data === 'string') ||
              (block.source.type === 'url' && typeof block.source.url === 'string')));
        if (!ok) return { status: 400, message: `messages.${i}.content: invalid content block` };
      }
    }
    return null;
  },
  texts(body) {
    const all: string[] = [];
    if (typeof body.system === 'string') all.push(body.system);
    let lastUser = '';
    for (const m of body.messages as any[]) {
      const text = typeof m.content === 'string' ? m.content : (m.content as any[]).filter((b) => b.type === 'text').map((b) => b.text).join('');
      all.push(text);
      if (m.role === 'user') lastUser = text;
    }
    return { all, lastUser };
  },
  success: (reply, req, n) => ({
    id: `msg_fake_${n}`,
    type: 'message',
    role: 'assistant',
    model: req.body.model,
    content: [
      ...(reply.content || !reply.calls ? [{ type: 'text', text: reply.content }] : []),
      ...(reply.calls ?? []).map((c, i) => ({ type: 'tool_use', id: c.id ?? `toolu_fake_${n}_${i}`, name: c.name, input: c.arguments })),
    ],
    stop_reason: reply.finish ?? (reply.calls ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: { input_tokens: reply.prompt, output_tokens: reply.completion },
  }),
  error: (status, message) => ({ type: 'error', error: { type: ANTHROPIC_ERROR_TYPES[status] ?? 'api_error', message } }),
  modelsPath: '/v1/models',
  modelList: (ids) => ({
    data: ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-05-14T00:00:00Z' })),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids[ids.length - 1] ?? null,
  }),
  authorized: (req, apiKey) => req.headers['x-api-key'] === apiKey,
  streams: (req) => req.body?.stream === true,
  streamEvents: (reply, req, n) => anthropicStreamEvents(reply, req.body.model, n),
  streamError: anthropicStreamError,
  extra: [{
    matches: (req) => req.method === 'POST' && req.path === '/v1/messages/count_tokens',
    check: (req, apiKey) =>
      req.headers['x-api-key'] !== apiKey ? { status: 401, message: 'invalid x-api-key' }
        : !req.headers['anthropic-version'] ? { status: 400, message: 'anthropic-version: header is required' } : checkAnthropicCount(req.body),
    success: (req) => anthropicCount(req.body),
  }],
};

// ---------------------------------------------------------------- Google Gemini

const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

const geminiDialect: Dialect = {
  vendor: 'gemini',
  basePath: '',
  requestIdHeader: 'x-goog-request-id',
  check(req, apiKey) {
    if (req.method !== 'POST' || !/^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.test(req.path)) return { status: 404, message: 'Not Found' };
    const key = req.headers['x-goog-api-key'];
    if (key === undefined) return { status: 403, message: "Method doesn't allow unregistered callers. Please use API Key or other form of API consumer identity to call this API." };
    if (key !== apiKey) return { status: 400, message: 'API key not valid. Please pass a valid API key.', detail: 'API_KEY_INVALID' };
    const body = req.body;
    if (!isObj(body) || !Array.isArray(body.contents) || body.contents.length === 0) return { status: 400, message: '* GenerateContentRequest.contents: contents is not specified' };
    for (const c of body.contents as any[]) {
      if (c.role !== 'user' && c.role !== 'model') return { status: 400, message: 'Please use a valid role: user, model.' };
      if (!Array.isArray(c.parts) || c.parts.length === 0) return { status: 400, message: '* GenerateContentRequest.contents[].parts: contents.parts must not be empty.' };
      for (const p of c.parts) {
        const inline = p.inlineData ?? p.inline_data;
        const call = isObj(p.functionCall) && typeof p.functionCall.name === 'string' && c.role === 'model';
        const result = isObj(p.functionResponse) && typeof p.functionResponse.name === 'string' && isObj(p.functionResponse.response) && c.role === 'user';
        if (typeof p.text !== 'string' && !(isObj(inline) && typeof inline.data === 'string') && !call && !result) return { status: 400, message: 'Invalid part' };
      }
    }
    return null;
  },
  texts(body) {
    const all: string[] = [];
    for (const p of body.systemInstruction?.parts ?? []) if (typeof p.text === 'string') all.push(p.text);
    let lastUser = '';
    for (const c of body.contents as any[]) {
      const text = (c.parts as any[]).filter((p) => typeof p.text === 'string').map((p) => p.text).join('');
      all.push(text);
      if (c.role === 'user') lastUser = text;
    }
    return { all, lastUser };
  },
  success: (reply, req, n) => ({
    // candidateCount > 1: the same answer once per candidate, each with its index.
    candidates: Array.from({ length: req.body.generationConfig?.candidateCount ?? 1 }, (_, index) => ({
      content: {
        parts: [
          ...(reply.content || !reply.calls ? [{ text: reply.content }] : []),
          ...(reply.calls ?? []).map((c) => ({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.arguments } })),
        ],
        role: 'model',
      },
      finishReason: reply.finish ?? 'STOP',
      index,
    })),
    usageMetadata: { promptTokenCount: reply.prompt, candidatesTokenCount: reply.completion, totalTokenCount: reply.prompt + reply.completion },
    modelVersion: geminiModel(req.path),
    responseId: `resp_fake_${n}`,
  }),
  error: (status, message, detail) => ({
    error: {
      code: status,
      message,
      status: GOOGLE_STATUS[status] ?? 'UNKNOWN',
      ...(detail ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: detail, domain: 'googleapis.com' }] } : {}),
    },
  }),
  modelsPath: '/v1beta/models',
  modelList: (ids) => ({
    models: ids.map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: id.startsWith('embedding') ? ['embedContent'] : ['generateContent', 'countTokens'] })),
  }),
  authorized: (req, apiKey) => req.headers['x-goog-api-key'] === apiKey,
  streams: (req) => req.path.endsWith(':streamGenerateContent') && req.query.alt === 'sse',
  streamEvents: (reply, req, n) => geminiStreamEvents(reply, geminiModel(req.path), n, req.body),
  streamError: geminiStreamError,
  extra: [{
    matches: (req) => req.method === 'POST' && /^\/v1beta\/models\/[^/:]+:batchEmbedContents$/.test(req.path),
    check: (req, apiKey) => (req.headers['x-goog-api-key'] !== apiKey ? { status: 400, message: 'API key not valid. Please pass a valid API key.', detail: 'API_KEY_INVALID' } : checkGeminiBatch(req)),
    success: geminiEmbeddings,
  }],
};

function geminiModel(path: string): string {
  return decodeURIComponent(path.slice('/v1beta/models/'.length, path.lastIndexOf(':')));
}

export const startFakeOpenAI = (options: FakeOptions = {}) => startFake(openAIDialect, options);
export const startFakeAzure = (options: FakeOptions = {}) => startFake(azureDialect, options);
export const startFakeAnthropic = (options: FakeOptions = {}) => startFake(anthropicDialect, options);
export const startFakeGemini = (options: FakeOptions = {}) => startFake(geminiDialect, options);
