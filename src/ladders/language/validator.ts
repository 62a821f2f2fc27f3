// Entry point of ladder config validation (POST /v1/validate, and before every save and run).
// Both phases always run and report everything; see docs/ladder-language.md, "Validation".
import { isWellFormedText } from '../../unicode.js';
import type { LadderConfig } from './config.js';
import { validateMeaning } from './validate-meaning.js';
import { validateSchema } from './validate-schema.js';
import { Issues, isRecord } from './validation-issues.js';
import type { ValidationLimits } from './validation-limits.js';

export type { ValidationLimits } from './validation-limits.js';
export { parseKnobReference } from './knob-reference.js';

/**
 * `errors` lists at most MAX_REPORTED_ERRORS errors, then one entry saying how many more
 * were found; `errorCount` is the number found in all.
 */
export type ValidationResult =
  | { valid: true; errors: []; errorCount: 0; config: LadderConfig }
  | { valid: false; errors: string[]; errorCount: number };

/** The most errors one validation lists (docs/ladder-language.md, "Validation"). */
export const MAX_REPORTED_ERRORS = 100;

export const DEFAULT_VALIDATION_LIMITS: ValidationLimits = { maxSpendCap: 50, maxRecursionDepth: 10 };

/** A real config nests about eight levels; the bound keeps every recursive walk below safe. */
export const MAX_NESTING = 32;

/**
 * Schema errors come first, then meaning errors, each group in document order. On success
 * `config` is a deep copy of the input, so later edits to the input cannot bypass validation.
 */
export function validateConfig(input: unknown, limits: Partial<ValidationLimits> = {}): ValidationResult {
  if (!isRecord(input)) return invalid(['config: must be an object']);
  const unstorable = structuralProblem(input, MAX_NESTING);
  if (unstorable) return invalid([`config: ${unstorable}`]);
  const schema = new Issues(input, MAX_REPORTED_ERRORS);
  validateSchema(input, schema);
  // Meaning errors are listed after schema errors: once those fill the list, none could be.
  const meaning = new Issues(input, MAX_REPORTED_ERRORS - schema.items.length);
  if (schema.count < MAX_REPORTED_ERRORS) validateMeaning(input, { ...DEFAULT_VALIDATION_LIMITS, ...limits }, meaning);
  const errorCount = schema.count + meaning.count;
  if (errorCount === 0) return { valid: true, errors: [], errorCount: 0, config: structuredClone(input) as unknown as LadderConfig };
  const errors = [...schema.messages(), ...meaning.messages()];
  const more = errorCount - errors.length;
  if (more > 0) errors.push(`config: ${more} more ${more === 1 ? 'error' : 'errors'} not listed (at most ${MAX_REPORTED_ERRORS} are reported)`);
  return { valid: false, errors, errorCount };
}

const invalid = (errors: string[]): ValidationResult => ({ valid: false, errors, errorCount: errors.length });

/**
 * What would make a config impossible to walk or to store, checked before anything else:
 * absurd nesting, or text that is not valid Unicode. Iterative, so that an absurdly deep
 * document cannot exhaust the stack while being measured.
 */
function structuralProblem(root: unknown, limit: number): string | null {
  const unpaired = 'contains text that is not valid Unicode (an unpaired surrogate)';
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (!isWellFormedText(value)) return unpaired;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return `is nested more than ${limit} levels deep`;
    if (Array.isArray(value)) {
      for (const child of value) stack.push([child, depth + 1]);
      continue;
    }
    for (const key in value) {
      if (!isWellFormedText(key)) return unpaired;
      stack.push([(value as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return null;
}
