// Shared vocabulary between the chat routes, the ladder interpreter and the provider router.
import type { CallerSignal } from '../abort-scope.js';
import type { ContentPartInput, RequestMessage } from '../schemas/chat-messages.js';
import type { Choice, DirectChatRequest, UsageOut } from '../schemas/chat.js';

export type Role = 'system' | 'user' | 'assistant';

export type ContentPart = ContentPartInput;

/** A plain conversation message, as ladder runs take them. */
export interface ChatMessage {
  role: Role;
  content: string | ContentPart[];
}

type WithoutNull<T> = { [K in keyof T]: Exclude<T[K], null> };

/**
 * A chat request in OpenAI's wire format, as the router and every adapter take it: the validated
 * body without `stream`/`stream_options` and without members whose value was null (null means
 * "not given"). OpenAI-compatible vendors get it unchanged; the others translate it.
 */
export type ChatRequest = WithoutNull<Omit<DirectChatRequest, 'stream' | 'stream_options' | 'messages'>> & {
  messages: RequestMessage[];
};

export type Usage = UsageOut;

/** OpenAI's finish_reason values; every vendor's stop reason is mapped onto them. */
export type FinishReason = Choice['finish_reason'];

export type { Choice };

/** One stored provider connection, with its key already decrypted, as the router needs it. */
export interface ProviderConnection {
  /** Stable identity of the stored connection (the circuit breaker keys on it). */
  id: string;
  provider: string;
  priority: number;
  apiKey: string;
  endpoint: string | null;
  /** Tie-breaker among equal priorities: the older connection goes first. */
  createdAt: Date;
}

/** What one try against one connection came to, for logs, headers and error messages. */
export interface Attempt {
  provider: string;
  status: number | null;
  outcome: 'ok' | 'failed' | 'skipped';
  reason?: string;
  latencyMs: number;
}

export interface ChatResult {
  /** The first choice's text ('' when it has none): what a ladder node reads. */
  content: string;
  finishReason: FinishReason;
  usage: Usage;
  /** Every choice, in OpenAI's shape (absent: one choice of `content`, as ladder test doubles answer). */
  choices?: Choice[] | undefined;
  /** The vendor's own name for the model that answered, when it says. */
  model?: string | undefined;
  systemFingerprint?: string | undefined;
  serviceTier?: string | undefined;
  /** The vendor's own answer, when the request came in that vendor's format (Anthropic Messages to Anthropic). */
  native?: unknown;
  /** The provider id of the connection that answered. */
  provider: string;
  attempts: Attempt[];
  /** Milliseconds spent waiting on vendors, all attempts together. */
  upstreamMs: number;
}

/**
 * Receives a streamed call's text as it arrives (a ladder run's answer relayed live). A returned
 * promise holds the next vendor read until it settles, so a slow reader slows the vendor.
 */
export type DeltaSink = (text: string) => void | Promise<void>;

/**
 * The router's entry point, as the chat route and the ladder interpreter call it. With
 * `onDelta` the call is streamed and its text handed over as it arrives; it still resolves with
 * the whole result, so it is checkpointed, metered and traced as any other call.
 */
export type ModelCall = (request: ChatRequest, signal?: CallerSignal, onDelta?: DeltaSink) => Promise<ChatResult>;
