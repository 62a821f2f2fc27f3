// Effective knob values: the config's defaults overridden by a request's `knobs` object.
import { invalidRequest } from '../../errors.js';
import type { Knob, LadderConfig, ModelStep, Recursion } from '../language/config.js';
import { parseKnobReference } from '../language/knob-reference.js';

// These knobs count things (passes, depth, nodes), so a fractional request means the nearest count.
const COUNTING_KNOBS = new Set(['loops', 'recursion', 'nodes']);

/** The value a knob has when a request does not set it: the step marked default, else the first. */
export function knobDefault(knob: Knob): number {
  const step = knob.steps.find((s) => s.default === true) ?? knob.steps[0];
  return finish(knob, step?.value ?? 0);
}

/**
 * Every knob of the config with its effective value. `requested` is the request's `knobs`
 * member as received; undefined or null means no overrides.
 */
export function resolveKnobs(config: LadderConfig, requested: unknown): Record<string, number> {
  const knobs = config.knobs ?? {};
  const resolved: Record<string, number> = {};
  for (const [id, knob] of Object.entries(knobs)) resolved[id] = knobDefault(knob);
  if (requested === undefined || requested === null) return resolved;
  if (typeof requested !== 'object' || Array.isArray(requested)) {
    throw invalidRequest('invalid_knobs', 'knobs must be an object mapping knob ids to numbers.', 'knobs');
  }
  for (const [id, value] of Object.entries(requested)) {
    const knob = Object.hasOwn(knobs, id) ? knobs[id] : undefined;
    if (!knob) throw invalidRequest('invalid_knob', unknownKnobMessage(id, Object.keys(knobs)), `knobs.${id}`);
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw invalidRequest('invalid_knob', `Knob "${id}" must be a finite number, not ${describe(value)}.`, `knobs.${id}`);
    }
    const values = knob.steps.map((s) => s.value);
    const clamped = values.length ? Math.min(Math.max(value, Math.min(...values)), Math.max(...values)) : value;
    resolved[id] = finish(knob, clamped);
  }
  return resolved;
}

function finish(knob: Knob, value: number): number {
  return COUNTING_KNOBS.has(knob.type) ? Math.round(value) : value;
}

function unknownKnobMessage(id: string, known: string[]): string {
  const list = known.map((k) => `"${k}"`).join(', ');
  return known.length
    ? `Unknown knob "${id}": this ladder's knobs are ${list}.`
    : `Unknown knob "${id}": this ladder has no knobs.`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** A config number that may be written as `{{knobs.<id>}}`. */
function numberOrKnob(value: number | string | undefined, knobs: Record<string, number>, config: LadderConfig, fallback: number): number {
  if (typeof value === 'number') return value;
  const id = parseKnobReference(value);
  if (id === null) return fallback;
  const knob = config.knobs?.[id];
  return knobs[id] ?? (knob ? knobDefault(knob) : fallback);
}

/** Nodes of a step; at least 1, since a step without a node would have nothing to say. */
export function nodeCount(step: ModelStep, knobs: Record<string, number>, config: LadderConfig): number {
  return Math.max(1, Math.round(numberOrKnob(step.nodes, knobs, config, 1)));
}

export function maxDepthOf(recursion: Recursion, knobs: Record<string, number>, config: LadderConfig): number {
  return Math.max(0, Math.round(numberOrKnob(recursion.maxDepth, knobs, config, 0)));
}

/** Passes over the step list: the loops knob's value, 1 without one, never fewer than 1. */
export function passCount(config: LadderConfig, knobs: Record<string, number>): number {
  const entry = Object.entries(config.knobs ?? {}).find(([, knob]) => knob.type === 'loops');
  if (!entry) return 1;
  const [id, knob] = entry;
  return Math.max(1, Math.round(knobs[id] ?? knobDefault(knob)));
}

