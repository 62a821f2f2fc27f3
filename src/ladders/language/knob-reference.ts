// `{{knobs.<id>}}` lets a step's `nodes` or `recursion.maxDepth` follow a knob. Only the whole
// value counts: the language has no string interpolation, so a partial match is not a reference.

/** Knob ids and step ids share one alphabet: letters, digits, `_` and `-`. */
export const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

const KNOB_REFERENCE = /^\{\{knobs\.([A-Za-z0-9_-]+)\}\}$/;

/** The knob id when `value` is exactly `{{knobs.<id>}}`, otherwise null. */
export function parseKnobReference(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return KNOB_REFERENCE.exec(value)?.[1] ?? null;
}

/** True when a string mentions a knob reference anywhere, whole or not. */
export function mentionsKnobReference(value: string): boolean {
  return value.includes('{{knobs.');
}
