// Shared vocabulary between the chat routes, the ladder interpreter and the provider router.

export type Role = 'system' | 'user' | 'assistant';

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[];
}

/** A normalised chat request, independent of any vendor's wire format. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** OpenAI's finish_reason values; every vendor's stop reason is mapped onto them. */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

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
  content: string;
  finishReason: FinishReason;
  usage: Usage;
  /** The provider id of the connection that answered. */
  provider: string;
  attempts: Attempt[];
  /** Milliseconds spent waiting on vendors, all attempts together. */
  upstreamMs: number;
}

/** The router's entry point, as the chat route and the ladder interpreter call it. */
export type ModelCall = (request: ChatRequest, signal?: AbortSignal) => Promise<ChatResult>;
