// Builders for small ladder configs in validation tests; each returns a fresh object.
import { type ValidationLimits, validateConfig } from '../../../src/ladders/language/validator.js';

export type Json = Record<string, unknown>;

export function errorsOf(config: unknown, limits?: Partial<ValidationLimits>): string[] {
  const result = validateConfig(config, limits);
  return result.valid ? [] : result.errors;
}

export const text = (name = 'Question'): Json => ({ name, type: 'text', from: 'input.context' });

export const ingest = (stepId: string, from: Json = {}, extra: Json = {}): Json => ({
  name: 'Input',
  type: 'ingest',
  from: { stepId, ...from },
  ...extra,
});

export const multi = (stepId: string, from: Json = { nodeRef: 'accumulate' }): Json => ({
  name: 'Inputs',
  type: 'multi_ingest',
  from: { stepId, ...from },
});

export const step = (id: string, fields: Json[] = [text()], extra: Json = {}): Json => ({
  id,
  name: id,
  type: 'normal',
  fields,
  ...extra,
});

/** A config whose exit is the last top-level step, unless `extra` says otherwise. */
export function ladder(steps: Json[], extra: Json = {}): Json {
  return { name: 'Test ladder', exit: steps.at(-1)?.['id'] ?? 'none', steps, ...extra };
}

export const knob = (type: string, values: number[], extra: Json = {}): Json => ({
  name: `A ${type} knob`,
  type,
  steps: values.map((value) => ({ title: String(value), value })),
  ...extra,
});
