// Tables of the steps and knobs a (possibly malformed) config declares, for the meaning
// checks. A table is "complete" only when every entry could be identified; checks that
// would call a missing id an error run only against complete tables, to avoid noise.
import { parseKnobReference } from './knob-reference.js';
import { type Path, isRecord } from './validation-issues.js';

export interface StepEntry {
  id: string;
  path: Path;
  step: Record<string, unknown>;
  /** Index in the top-level list; the children of a group share the group's index. */
  position: number;
  /** Id of the enclosing group, if any. */
  group: string | null;
}

export interface KnobEntry {
  id: string;
  path: Path;
  type: unknown;
  /** The valid numeric step values, in order. */
  values: number[];
}

export interface LadderIndex {
  steps: Map<string, StepEntry>;
  stepsComplete: boolean;
  knobs: Map<string, KnobEntry>;
  knobsComplete: boolean;
}

export function visitSteps(
  config: Record<string, unknown>,
  visit: (entry: Omit<StepEntry, 'id'> & { id: unknown }) => void,
  malformed: () => void = () => {},
): void {
  const steps = config['steps'];
  if (!Array.isArray(steps)) return;
  steps.forEach((step, position) => {
    if (!isRecord(step)) return malformed();
    const group = step['type'] === 'group' && typeof step['id'] === 'string' ? step['id'] : null;
    visit({ id: step['id'], path: ['steps', position], step, position, group: null });
    if (step['type'] !== 'group') return;
    if (!Array.isArray(step['steps'])) return malformed();
    step['steps'].forEach((child, index) => {
      if (!isRecord(child)) return malformed();
      visit({ id: child['id'], path: ['steps', position, 'steps', index], step: child, position, group });
    });
  });
}

export function indexLadder(config: Record<string, unknown>): LadderIndex {
  const steps = new Map<string, StepEntry>();
  let stepsComplete = Array.isArray(config['steps']);
  const incomplete = () => {
    stepsComplete = false;
  };
  visitSteps(
    config,
    (entry) => {
      if (typeof entry.id !== 'string') incomplete();
      else if (!steps.has(entry.id)) steps.set(entry.id, { ...entry, id: entry.id });
    },
    incomplete,
  );

  const knobs = new Map<string, KnobEntry>();
  const rawKnobs = 'knobs' in config ? config['knobs'] : {};
  const knobsComplete = isRecord(rawKnobs);
  if (knobsComplete) {
    for (const [id, knob] of Object.entries(rawKnobs)) {
      const rawSteps = isRecord(knob) && Array.isArray(knob['steps']) ? knob['steps'] : [];
      const values = rawSteps
        .map((step) => (isRecord(step) ? step['value'] : undefined))
        .filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
      knobs.set(id, { id, path: ['knobs', id], type: isRecord(knob) ? knob['type'] : undefined, values });
    }
  }
  return { steps, stepsComplete, knobs, knobsComplete };
}

/** Every knob id some step names in `nodes` or `recursion.maxDepth`. */
export function referencedKnobs(config: Record<string, unknown>): Set<string> {
  const used = new Set<string>();
  visitSteps(config, ({ step }) => {
    const nodes = parseKnobReference(step['nodes']);
    if (nodes) used.add(nodes);
    const recursion = step['recursion'];
    const depth = isRecord(recursion) ? parseKnobReference(recursion['maxDepth']) : null;
    if (depth) used.add(depth);
  });
  return used;
}
