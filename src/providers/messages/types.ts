// Anthropic's Messages API as the router carries it: a chat request made from it (for every
// vendor), with the original body riding along so that Anthropic itself gets it unchanged.

/** An Anthropic Messages request body, as validated by src/schemas/messages.ts. */
export type MessagesBody = Record<string, unknown>;

/**
 * The key under which a ChatRequest made from a Messages request carries what chat's shape has
 * no member for. A symbol: never enumerated, so never checked or sent as a chat member.
 */
export const MESSAGES_ORIGIN = Symbol('messages request');

export interface MessagesOrigin {
  /** The caller's body: Anthropic is sent it as it is (model and max_tokens as routed). */
  body: MessagesBody;
  /** `top_k`: sent where a vendor takes it (Anthropic, Gemini); any other vendor is skipped. */
  topK?: number | undefined;
  /** The caller's `anthropic-beta` header, passed on to Anthropic. */
  betas?: string | undefined;
  /** Why a vendor other than Anthropic cannot take the request (a block or tool only Anthropic has), or null. */
  anthropicOnly: string | null;
}

export const messagesOrigin = (request: object): MessagesOrigin | undefined =>
  (request as { [MESSAGES_ORIGIN]?: MessagesOrigin })[MESSAGES_ORIGIN];

/** Counting a Messages request's input tokens without running it. */
export interface TokenCounting {
  path(basePath: string): string;
  body(request: MessagesBody, vendorModel: string): Record<string, unknown>;
  /** The input token count; throws ShapeError for another shape. */
  parse(body: unknown): number;
}
