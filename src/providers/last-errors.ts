// The last failed attempt of each circuit, for the connections list (GET /v1/providers): what
// went wrong and when, as this node saw it. Only the reason code and the vendor's HTTP status
// are kept, never the vendor's message, which may quote the key it was sent.
export interface LastError {
  reason: string;
  status: number | null;
  at: string;
}

export class LastErrors {
  private readonly errors = new Map<string, LastError>();

  /** `max`: circuits remembered at most; past it the least recently failed is forgotten. */
  constructor(private readonly max = 10_000, private readonly now: () => number = Date.now) {}

  record(circuit: string, reason: string, status: number | null): void {
    // Re-inserted, so the map's order is least recently failed first.
    this.errors.delete(circuit);
    if (this.errors.size >= this.max) this.errors.delete(this.errors.keys().next().value!);
    this.errors.set(circuit, { reason, status, at: new Date(this.now()).toISOString() });
  }

  get(circuit: string): LastError | null {
    return this.errors.get(circuit) ?? null;
  }
}
