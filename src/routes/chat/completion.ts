// Helpers shared by the direct and the ladder chat completion routes.
import type { FastifyReply } from 'fastify';
import { invalidRequest } from '../../errors.js';
import { headerText } from '../../http/header-value.js';
import type { Attempt, ChatRequest, ChatResult, Choice, FinishReason, Usage } from '../../providers/types.js';
import type { ChatCompletion, DirectChatRequest } from '../../schemas/chat.js';

export function rejectStreaming(stream: boolean | null | undefined): void {
  if (stream === true) {
    throw invalidRequest('stream_not_supported', 'Streaming is not supported yet: omit `stream` or set it to false.', 'stream');
  }
}

export function requireUserMessage(messages: Array<{ role: string }>): void {
  if (!messages.some((m) => m.role === 'user')) {
    throw invalidRequest('missing_user_message', 'messages must contain at least one message with role "user".', 'messages');
  }
}

/** The validated body as the router takes it: null members dropped (null means "not given"), no stream members. */
export function toChatRequest(body: DirectChatRequest): ChatRequest {
  const out: Record<string, unknown> = {};
  for (const key in body) {
    const value = body[key as keyof DirectChatRequest];
    if (value === null || value === undefined || key === 'stream' || key === 'stream_options') continue;
    out[key] = value;
  }
  return out as ChatRequest;
}

/** One plain text choice: a ladder's answer, or a vendor result without choices. */
export function textChoice(content: string, finishReason: FinishReason): Choice {
  return { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finishReason };
}

/** `at`: when the answer was ready (a ladder run's recorded finish, so a later read shows the same `created`). */
export function chatCompletion(id: string, model: string, choices: Choice[], usage: Usage, result?: ChatResult, at = new Date()): ChatCompletion {
  const completion: ChatCompletion = {
    id,
    object: 'chat.completion',
    created: Math.floor(at.getTime() / 1000),
    model,
    choices,
    usage,
  };
  if (result?.systemFingerprint !== undefined) completion.system_fingerprint = result.systemFingerprint;
  if (result?.serviceTier !== undefined) completion.service_tier = result.serviceTier;
  return completion;
}

/**
 * `openai;status=500;reason=server_error`, `anthropic;reason=timeout`, `groq;status=200`: a
 * reason marks every attempt that did not answer, even one that got HTTP 200 with a bad body.
 */
function describeAttempt(attempt: Attempt): string {
  let text = headerText(attempt.provider) ?? '';
  if (attempt.status !== null) text += `;status=${attempt.status}`;
  if (attempt.reason) text += `;reason=${headerText(attempt.reason) ?? ''}`;
  return text;
}

/** Sets a header carrying a caller's or vendor's text, percent-encoded (src/http/header-value.ts); left out when too long. */
export function setTextHeader(reply: FastifyReply, name: string, text: string): void {
  const value = headerText(text);
  if (value !== undefined) reply.header(name, value);
}

/**
 * What happened upstream, for the caller to see: which connection answered, every attempt,
 * and `server-timing` splitting the time between vendors and this service's own work.
 */
export function setRoutingHeaders(reply: FastifyReply, attempts: Attempt[], upstreamMs: number, provider?: string): void {
  if (provider) setTextHeader(reply, 'x-ladder-provider', provider);
  // Each attempt's texts are encoded in describeAttempt, so the list keeps its ", " separators.
  reply.header('x-ladder-attempts', attempts.map(describeAttempt).join(', ') || '0');
  const overhead = Math.max(0, reply.elapsedTime - upstreamMs);
  reply.header('server-timing', `upstream;dur=${upstreamMs.toFixed(3)}, overhead;dur=${overhead.toFixed(3)}`);
}
