// Reading database errors: the SQLSTATE wherever a driver or drizzle wrapped it, whether a
// statement failed because of the data it was given, and what of an error may be logged.

/** The SQLSTATE of a database error, wherever a driver or drizzle wrapped it. */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Whether a statement was refused for the values it carried: data exceptions (class 22: NUL in
 * text, out-of-range numbers, bad encodings) and integrity violations (class 23). Running it
 * again with the same values fails again, unlike a lost connection.
 */
export function isDataError(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && (state.startsWith('22') || state.startsWith('23'));
}

/**
 * What of a failure goes into the log. A database error is reduced to its driver's message,
 * SQLSTATE and stack: drizzle puts the statement and its parameters (which can be key hashes,
 * sealed provider keys or a whole batch of rows) in its message, and drivers attach them as
 * properties.
 */
export function loggableError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const carriesSql = (e: Error) => 'query' in e || 'params' in e || e.message.startsWith('Failed query:');
  let inner: Error = error;
  // Peel off the wrappers that carry the statement, down to the driver's own error.
  while (carriesSql(inner) && inner.cause instanceof Error) inner = inner.cause;
  if (inner === error && !carriesSql(error) && sqlState(error) === undefined) return error;
  const message = inner.message.startsWith('Failed query:') ? 'A database query failed.' : inner.message;
  return { type: inner.name, message, code: (inner as { code?: unknown }).code, stack: inner.stack?.split('\n').filter((line) => line.startsWith('    at ')).join('\n') };
}
