// The run's budget with calls in flight. Before a call starts, its worst-case cost is reserved:
// the prompt at a token count it cannot exceed, plus max_tokens at the model's output price,
// where max_tokens is what the call's share of the unreserved budget can pay. A call whose
// smallest useful reservation does not fit is not started. As long as vendors honour max_tokens
// and count prompts as tokenizers do, spent + reserved never exceeds the budget.
import { nanosPerToken, type ModelPrice } from '../../pricing/prices.js';

/** Chat framing a vendor adds around one user message, in tokens; generous for every vendor. */
export const PROMPT_OVERHEAD_TOKENS = 16;
/** The smallest answer worth asking for; a call that cannot pay for it is not made. */
export const MIN_OUTPUT_TOKENS = 16;
/** Default cap on one ladder call's max_tokens: every current chat model accepts it. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export interface Reservation {
  /** Sent to the vendor as max_tokens. */
  maxTokens: number;
  /** Whole nanos reserved. */
  nanos: number;
}

export interface BudgetOptions {
  maxSpendNanos: number;
  /** Calls the run may have in flight at once; each may reserve its share of what is free. */
  maxConcurrentCalls: number;
  maxOutputTokens: number;
  price: ModelPrice;
}

/** No call can reserve less than this; reported in the budget error. */
export interface Shortfall {
  spentNanos: number;
  reservedNanos: number;
  neededNanos: number;
}

/** An upper bound on a prompt's tokens: no tokenizer makes more tokens than UTF-8 bytes. */
export function promptTokenBound(prompt: string): number {
  return Buffer.byteLength(prompt, 'utf8') + PROMPT_OVERHEAD_TOKENS;
}

export class RunBudget {
  private spent = 0;
  private reserved = 0;
  private inFlight = 0;

  constructor(private readonly options: BudgetOptions) {}

  get spentNanos(): number {
    return this.spent;
  }

  /** Reserves a call's worst case, or says what it would need when even the smallest does not fit. */
  reserve(prompt: string): Reservation | Shortfall {
    const { maxSpendNanos, maxConcurrentCalls, maxOutputTokens, price } = this.options;
    const perToken = nanosPerToken(price.output);
    const promptNanos = promptTokenBound(prompt) * nanosPerToken(price.input);
    const minimal = Math.ceil(promptNanos + MIN_OUTPUT_TOKENS * perToken);
    const free = maxSpendNanos - this.spent - this.reserved;
    if (minimal > free) return { spentNanos: this.spent, reservedNanos: this.reserved, neededNanos: minimal };
    // An equal share for every call that may still start alongside, so the first of a step's
    // parallel nodes cannot take the whole budget and starve the rest.
    const share = Math.max(minimal, free / Math.max(1, maxConcurrentCalls - this.inFlight));
    const affordable = perToken > 0 ? Math.floor((share - promptNanos) / perToken) : maxOutputTokens;
    const maxTokens = Math.max(MIN_OUTPUT_TOKENS, Math.min(maxOutputTokens, affordable));
    const nanos = Math.ceil(promptNanos + maxTokens * perToken);
    this.reserved += nanos;
    this.inFlight += 1;
    return { maxTokens, nanos };
  }

  /** A call an earlier attempt of the run made and paid for (replayed from its checkpoint). */
  charge(costNanos: number): void {
    this.spent += costNanos;
  }

  /** Ends a call: its reservation is released and what it really cost is spent. */
  settle(reservation: Reservation, costNanos: number): void {
    this.reserved = Math.max(0, this.reserved - reservation.nanos);
    this.inFlight -= 1;
    this.spent += costNanos;
  }
}

export const isReservation = (r: Reservation | Shortfall): r is Reservation => 'maxTokens' in r;
