// Meaning checks for `knobs`: ids, values per knob type, defaults, and that the knob types
// which exist only to be referenced (nodes, recursion) are referenced.
import { ID_PATTERN } from './knob-reference.js';
import { type Issues, type Path, formatPath, isRecord } from './validation-issues.js';
import type { ValidationLimits } from './validation-limits.js';

const SINGLETON_TYPES = ['loops', 'recursion'] as const;

export function checkKnobs(knobs: unknown, referenced: Set<string>, limits: ValidationLimits, issues: Issues): void {
  if (!isRecord(knobs)) return;
  const firstOfType = new Map<string, string>();
  for (const [id, knob] of Object.entries(knobs)) {
    const path: Path = ['knobs', id];
    if (!ID_PATTERN.test(id)) issues.add(path, 'a knob id may use only letters, digits, "_" and "-"');
    if (!isRecord(knob)) continue;
    const type = knob['type'];
    if (typeof type === 'string' && (SINGLETON_TYPES as readonly string[]).includes(type)) {
      const first = firstOfType.get(type);
      if (first !== undefined) issues.add([...path, 'type'], `only one ${type} knob is allowed, and ${JSON.stringify(first)} is already one`);
      else firstOfType.set(type, id);
    }
    checkKnobSteps(knob['steps'], type, [...path, 'steps'], limits, issues);
    if ((type === 'nodes' || type === 'recursion') && !referenced.has(id)) {
      const where = type === 'nodes' ? "a step's nodes" : "the recursion step's maxDepth";
      issues.add(path, `${type} knob ${JSON.stringify(id)} is not used; set ${where} to "{{knobs.${id}}}"`);
    }
  }
}

function valueRule(type: unknown, limits: ValidationLimits): { ok: (value: number) => boolean; sentence: string } | null {
  if (type === 'nodes' || type === 'loops') {
    return { ok: (value) => Number.isInteger(value) && value >= 1, sentence: `a ${type} knob's values must be whole numbers of at least 1` };
  }
  if (type === 'recursion') {
    const most = limits.maxRecursionDepth;
    return {
      ok: (value) => Number.isInteger(value) && value >= 0 && value <= most,
      sentence: `a recursion knob's values must be whole numbers from 0 to ${most}`,
    };
  }
  return null;
}

function checkKnobSteps(steps: unknown, type: unknown, path: Path, limits: ValidationLimits, issues: Issues): void {
  if (!Array.isArray(steps)) return;
  if (steps.length === 0) issues.add(path, 'must list at least one value');
  const rule = valueRule(type, limits);
  let defaultPath: Path | null = null;
  steps.forEach((step, i) => {
    if (!isRecord(step)) return;
    const value = step['value'];
    if (rule && typeof value === 'number' && Number.isFinite(value) && !rule.ok(value)) {
      issues.add([...path, i, 'value'], rule.sentence);
    }
    if (step['default'] !== true) return;
    if (defaultPath) issues.add([...path, i, 'default'], `only one value may be the default, and ${formatPath(defaultPath)} already is`);
    else defaultPath = [...path, i];
  });
}
