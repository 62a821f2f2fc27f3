// What a ladder run takes from an OpenAI-shaped request, shared by the synchronous route and
// the background-run endpoint: the members a ladder honours, the ones that change nothing, and
// a check that refuses every other one (a ladder is no single model call: tools, n, formats
// and sampling settings have nothing to apply to) instead of ignoring it.
import { invalidRequest } from '../errors.js';
import type { ChatMessage } from '../providers/types.js';
import type { RequestMessage } from './chat-messages.js';
import { checkModelName } from './model-name.js';

/** Members a ladder run uses (docs/ladders-api.md). */
export const LADDER_RUN_MEMBERS = ['model', 'messages', 'knobs', 'stream', 'stream_options'] as const;

/** Members accepted and without effect, as for direct completions of vendors that lack them. */
export const LADDER_NOOP_MEMBERS: ReadonlySet<string> = new Set([
  'user', 'safety_identifier', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention',
  'prompt_cache_options',
]);

/** Values that ask for nothing beyond the default, so a ladder honours them trivially. */
const NEUTRAL: Record<string, (value: unknown) => boolean> = {
  n: (v) => v === 1,
  response_format: (v) => (v as { type?: unknown }).type === 'text',
  logprobs: (v) => v === false,
  top_logprobs: (v) => v === 0,
  modalities: (v) => Array.isArray(v) && v.every((m) => m === 'text'),
  tool_choice: (v) => v === 'none',
};

const unsupported = (param: string, what: string) =>
  invalidRequest(
    'unsupported_parameter',
    `A ladder run cannot honour \`${param}\`: ${what}. A ladder takes model, messages (the last user message is its input) and knobs.`,
    param,
  );

/**
 * Throws 400 unsupported_parameter naming the first member (or message field) a ladder cannot
 * honour. `body` is an already schema-validated request; null values count as not given.
 */
export function checkLadderRunRequest(body: Record<string, unknown>): void {
  checkModelName(body.model as string);
  for (const key in body) {
    const value = body[key];
    if (value === null || value === undefined) continue;
    if ((LADDER_RUN_MEMBERS as readonly string[]).includes(key) || LADDER_NOOP_MEMBERS.has(key)) continue;
    if (NEUTRAL[key]?.(value)) continue;
    throw unsupported(key, 'its steps make their own model calls with their own settings');
  }
  const messages = body.messages as RequestMessage[];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool' || m.role === 'function') throw unsupported(`messages[${i}].role`, `a ladder has no tools, so no "${m.role}" results`);
    for (const key of ['tool_calls', 'function_call', 'audio'] as const) {
      if (m[key] !== undefined && m[key] !== null) throw unsupported(`messages[${i}].${key}`, 'a ladder has no tools or audio');
    }
  }
}

/** Messages as a ladder run keeps them: developer turns count as system turns. Call after the check. */
export function toLadderMessages(messages: RequestMessage[]): ChatMessage[] {
  return messages.map((m) => ({
    role: m.role === 'developer' ? 'system' : (m.role as ChatMessage['role']),
    content: m.content ?? '',
  }));
}
