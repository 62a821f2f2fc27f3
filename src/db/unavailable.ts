// Telling "the database is not there" apart from a failed statement, so that a request that
// needed it gets a retryable 503 `database_unavailable` instead of a 500. Drivers and drizzle
// wrap errors in each other; the whole `cause` chain is looked at.

// Node's socket errors when the server is down, restarting or unreachable.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// SQLSTATE: connection exceptions (class 08), the server shutting down or starting (57P01-57P03),
// too many connections (53300).
const SQL_STATES = /^(08...|57P0[123]|53300)$/;
// node-postgres and PGlite say it in words only.
const MESSAGES = /^(PGlite is closed|Cannot use a pool after calling end on the pool|timeout exceeded when trying to connect|Connection terminated)/;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQL_STATES.test(code))) return true;
    if (MESSAGES.test(e.message)) return true;
  }
  return false;
}
