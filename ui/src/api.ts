// Calls to the service's API with the signed-in API key. The key lives in sessionStorage
// only: it is gone when the tab closes, and it never goes into localStorage, a cookie or a URL.

const KEY_STORAGE = 'ladder.apiKey';
const USERNAME_STORAGE = 'ladder.username';
const SCOPE_STORAGE = 'ladder.scope';

export type Scope = 'use' | 'manage';

export const session = {
  get key(): string | null {
    return sessionStorage.getItem(KEY_STORAGE);
  },
  /** The signed-in account's username (GET /v1/account), for what the UI prefills. */
  get username(): string | null {
    return sessionStorage.getItem(USERNAME_STORAGE);
  },
  /** The signed-in key's scope: `manage` keys see the dashboard's pages. */
  get scope(): Scope | null {
    const scope = sessionStorage.getItem(SCOPE_STORAGE);
    return scope === 'use' || scope === 'manage' ? scope : null;
  },
  signIn(key: string, account: AccountSummary): void {
    sessionStorage.setItem(KEY_STORAGE, key);
    remember(account);
  },
  signOut(): void {
    sessionStorage.removeItem(KEY_STORAGE);
    sessionStorage.removeItem(USERNAME_STORAGE);
    sessionStorage.removeItem(SCOPE_STORAGE);
  },
};

/** What the UI needs of GET /v1/account. */
export interface AccountSummary {
  username: string;
  key: { scope: Scope };
}

function remember(account: AccountSummary): void {
  sessionStorage.setItem(USERNAME_STORAGE, account.username);
  sessionStorage.setItem(SCOPE_STORAGE, account.key.scope);
}

/** The signed-in key's scope: remembered at sign-in, else asked once (a tab signed in before scopes were shown). */
export async function currentScope(): Promise<Scope | null> {
  if (session.scope) return session.scope;
  try {
    const { body } = await api<AccountSummary>('GET', '/v1/account');
    if (session.key) remember(body);
    return body.key.scope;
  } catch {
    return null;
  }
}

/** The signed-in account's username: remembered at sign-in, else asked once. */
export async function currentUsername(): Promise<string | null> {
  if (session.username) return session.username;
  try {
    const { body } = await api<AccountSummary>('GET', '/v1/account');
    if (session.key) remember(body);
    return body.username;
  } catch {
    return null;
  }
}

export function authHeaders(): Record<string, string> {
  return session.key ? { authorization: `Bearer ${session.key}` } : {};
}

/** An answer in the error envelope. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** Called when the API says the key is no longer valid. */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

export async function api<T>(method: string, path: string, body?: unknown, options: { signal?: AbortSignal; key?: string } = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = options.key ? { authorization: `Bearer ${options.key}` } : authHeaders();
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), signal: options.signal ?? null, cache: 'no-store' });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiFailure(0, 'network_error', 'The service cannot be reached. Check your connection and try again.');
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!res.ok) {
    const error = (parsed as { error?: { code?: string; message?: string; param?: string | null } } | null)?.error;
    if (res.status === 401 && !options.key) onUnauthorized();
    throw new ApiFailure(res.status, error?.code ?? 'http_error', error?.message ?? `The service answered HTTP ${res.status}.`, error?.param ?? null);
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** The instance body of GET /v1/pipelines/instances/{id} (and of a stream's terminal event). */
export interface Instance {
  instanceId: string;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';
  mode: 'sync' | 'async';
  author: string;
  template: string;
  version: number;
  model: string;
  knobs: Record<string, number>;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress?: { model_calls: number; steps_completed: number; steps_total: number };
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  spend_usd?: number;
  /** Set on a rerun: the run it reran, and how many of its calls it reused (and what they had cost). */
  rerun_of?: string | null;
  reused_calls?: number;
  reused_spend_usd?: number;
  result?: { choices: Array<{ message: { content: string } }> } | null;
  error?: { message: string; code: string; status: number } | null;
}

export const FINISHED = new Set(['completed', 'failed', 'cancelled']);

export function instanceDuration(instance: Instance, now = Date.now()): number | null {
  if (!instance.started_at) return null;
  const end = instance.finished_at ? Date.parse(instance.finished_at) : now;
  return end - Date.parse(instance.started_at);
}
