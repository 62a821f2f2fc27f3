// Shared set-up of the Responses API end-to-end tests: the server on its real TLS listener,
// fake vendors in all three wire formats (and a second OpenAI-compatible one for fallback),
// and accounts with the official openai client pointed at the service.
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch, request } from 'undici';
import type { Database } from '../../src/db/client.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { createUser, LogCapture, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

export const KEYS = { openai: 'sk-resp-openai-1111111111', openrouter: 'sk-or-resp-2222222222', anthropic: 'sk-ant-resp-3333333333', google: 'AIza-resp-4444444444' };
export const RESPONSE_ID = /^resp_[0-9a-f]{32}$/;

export type Connection = { provider: string; api_key: string; priority?: number };
export const openai = (priority = 0): Connection => ({ provider: 'openai', api_key: KEYS.openai, priority });
export const openrouter = (priority = 10): Connection => ({ provider: 'openrouter', api_key: KEYS.openrouter, priority });
export const anthropic = (priority = 20): Connection => ({ provider: 'anthropic', api_key: KEYS.anthropic, priority });
export const google = (priority = 30): Connection => ({ provider: 'google', api_key: KEYS.google, priority });

export interface Harness {
  server: RunningServer;
  database: Database;
  fakes: Record<'openai' | 'openrouter' | 'anthropic' | 'gemini', FakeVendor>;
  logs: LogCapture;
  account(connections: Connection[]): Promise<{ id: string; key: string; headers: Record<string, string>; client: OpenAI }>;
  /** A raw call: status, headers and the body's text as sent. */
  raw(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; headers: Record<string, unknown>; text: string }>;
  ledger(accountId: string): Promise<Array<Record<string, any>>>;
  close(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const fakes = {
    openai: await startFakeOpenAI({ apiKey: KEYS.openai }),
    openrouter: await startFakeOpenAI({ apiKey: KEYS.openrouter }),
    anthropic: await startFakeAnthropic({ apiKey: KEYS.anthropic }),
    gemini: await startFakeGemini({ apiKey: KEYS.google }),
  };
  const database = await openTestDatabase();
  const logs = new LogCapture();
  const config = testConfig({
    PORT: '0',
    PROVIDER_BASE_URL_OPENAI: fakes.openai.baseUrl,
    PROVIDER_BASE_URL_OPENROUTER: fakes.openrouter.baseUrl,
    PROVIDER_BASE_URL_ANTHROPIC: fakes.anthropic.baseUrl,
    PROVIDER_BASE_URL_GOOGLE: fakes.gemini.baseUrl,
    BREAKER_FAILURE_THRESHOLD: '1000',
    STREAM_FIRST_BYTE_TIMEOUT_MS: '2000',
    STREAM_IDLE_TIMEOUT_MS: '1000',
    USAGE_FLUSH_MS: '600000',
    WORKER_CONCURRENCY: '0',
    ...env,
  });
  const server = await startServer(config, { logStream: logs, database });
  const tls = new Agent({ connect: { rejectUnauthorized: false } });

  return {
    server,
    database,
    fakes,
    logs,
    async account(connections) {
      const user = await createUser(server.app);
      for (const connection of connections) {
        const res = await server.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: connection });
        if (res.statusCode !== 201) throw new Error(`adding ${connection.provider} failed: ${res.body}`);
      }
      const client = new OpenAI({
        apiKey: user.key,
        baseURL: `${server.url}/v1`,
        maxRetries: 0,
        timeout: 10_000,
        fetch: undiciFetch as unknown as typeof fetch,
        fetchOptions: { dispatcher: tls } as Record<string, unknown>,
      });
      return { ...user, client };
    },
    async raw(method, path, key, body) {
      const res = await request(`${server.url}${path}`, {
        method: method as 'GET',
        dispatcher: tls,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    },
    async ledger(accountId) {
      await server.app.usageLedger.flush();
      return database.query('select provider, model, prompt_tokens, completion_tokens, outcome from usage_records where account_id = $1 order by id', [accountId]);
    },
    async close() {
      await server.close();
      await database.close();
      await Promise.all(Object.values(fakes).map((f) => f.close()));
      await tls.close();
    },
  };
}

/** The events of a Responses event stream: `event:` names and parsed `data:`. */
export function eventsOf(text: string): Array<{ event: string; data: any }> {
  return text.split('\n\n').filter(Boolean).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
    const data = /^data: (.*)$/m.exec(block)?.[1] ?? 'null';
    return { event, data: JSON.parse(data) };
  });
}
