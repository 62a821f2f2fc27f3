// Entry point of ladder config validation (POST /v1/validate, and before every save and run).
// Both phases always run and report everything; see docs/ladder-language.md, "Validation".
import { wellFormedText } from '../unicode.js';
import type { LadderConfig } from './config.js';
import { type ValidationLimits, validateMeaning } from './validate-meaning.js';
import { validateSchema } from './validate-schema.js';
import { Issues, inDocumentOrder, isRecord } from './validation-issues.js';

export type { ValidationLimits } from './validate-meaning.js';
export { parseKnobReference } from './knob-reference.js';

export type ValidationResult = { valid: true; errors: []; config: LadderConfig } | { valid: false; errors: string[] };

export const DEFAULT_VALIDATION_LIMITS: ValidationLimits = { maxSpendCap: 50, maxRecursionDepth: 10 };

/** A real config nests about eight levels; the bound keeps every recursive walk below safe. */
export const MAX_NESTING = 32;

/**
 * Schema errors come first, then meaning errors, each group in document order. On success
 * `config` is a deep copy of the input, so later edits to the input cannot bypass validation.
 */
export function validateConfig(input: unknown, limits: Partial<ValidationLimits> = {}): ValidationResult {
  if (!isRecord(input)) return { valid: false, errors: ['config: must be an object'] };
  const unstorable = structuralProblem(input, MAX_NESTING);
  if (unstorable) return { valid: false, errors: [`config: ${unstorable}`] };
  const schema = new Issues();
  validateSchema(input, schema);
  const meaning = new Issues();
  validateMeaning(input, { ...DEFAULT_VALIDATION_LIMITS, ...limits }, meaning);
  const errors = [...inDocumentOrder(input, schema.items), ...inDocumentOrder(input, meaning.items)];
  if (errors.length > 0) return { valid: false, errors };
  return { valid: true, errors: [], config: structuredClone(input) as unknown as LadderConfig };
}


/**
 * What would make a config impossible to walk or to store, checked before anything else:
 * absurd nesting, or text that is not valid Unicode. Iterative, so that an absurdly deep
 * document cannot exhaust the stack while being measured.
 */
function structuralProblem(root: unknown, limit: number): string | null {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (wellFormedText(value) !== value) return 'contains text that is not valid Unicode (an unpaired surrogate)';
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return `is nested more than ${limit} levels deep`;
    for (const [key, child] of Object.entries(value)) stack.push([key, depth + 1], [child, depth + 1]);
  }
  return null;
}
