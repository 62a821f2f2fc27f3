// Phase two: what a config means. Every check reads only values of the right type, so it
// can run on a config whose schema phase failed elsewhere without repeating those errors.
import { isWholeNanos } from '../../money.js';
import { ID_PATTERN, mentionsKnobReference, parseKnobReference } from './knob-reference.js';
import { type LadderIndex, indexLadder, referencedKnobs, visitSteps } from './ladder-index.js';
import { checkKnobs } from './validate-knobs.js';
import { checkFields } from './validate-reads.js';
import { type Issues, type Path, formatPath, isRecord } from './validation-issues.js';
import type { ValidationLimits } from './validation-limits.js';

export function validateMeaning(config: Record<string, unknown>, limits: ValidationLimits, issues: Issues): void {
  const index = indexLadder(config);
  checkExit(config['exit'], index, issues);
  checkAllowedTargets(config['allowedTargets'], issues);
  checkBudget(config['executionBudget'], limits, issues);
  checkKnobs(config['knobs'], referencedKnobs(config), limits, issues);
  checkSteps(config, index, limits, issues);
}

function checkExit(exit: unknown, index: LadderIndex, issues: Issues): void {
  if (typeof exit !== 'string') return;
  const target = index.steps.get(exit);
  if (!target) {
    if (index.stepsComplete) issues.add(['exit'], `no step has id ${JSON.stringify(exit)}`);
  } else if (target.step['type'] === 'group') {
    issues.add(['exit'], `${JSON.stringify(exit)} is a group, which has no output of its own; name one of its child steps or another step`);
  }
}

function checkAllowedTargets(targets: unknown, issues: Issues): void {
  if (!isRecord(targets) || targets['strategy'] !== 'constrained') return;
  for (const [key, noun] of [['providers', 'provider'], ['models', 'model']] as const) {
    const list = targets[key];
    if (!Array.isArray(list)) continue;
    const path = ['allowedTargets', key];
    if (list.length === 0) issues.add(path, `must list at least one ${noun}, or "*" for any ${noun}`);
    list.forEach((entry, i) => {
      if (entry === '') issues.add([...path, i], 'must be a non-empty string');
    });
    if (list.length > 1 && list.includes('*')) issues.add(path, `"*" must stand alone; it already allows every ${noun}`);
  }
}

function checkBudget(budget: unknown, limits: ValidationLimits, issues: Issues): void {
  const maxSpend = isRecord(budget) ? budget['maxSpend'] : undefined;
  if (typeof maxSpend !== 'number' || !Number.isFinite(maxSpend)) return;
  const path = ['executionBudget', 'maxSpend'];
  if (maxSpend <= 0) issues.add(path, 'must be greater than 0');
  else if (maxSpend > limits.maxSpendCap) {
    issues.add(path, `${maxSpend} is above the platform maximum of ${limits.maxSpendCap} (USD)`);
  } else if (!isWholeNanos(maxSpend)) {
    issues.add(path, `${maxSpend} has more than 9 decimals (budgets are whole nano-dollars)`);
  }
}

function checkSteps(config: Record<string, unknown>, index: LadderIndex, limits: ValidationLimits, issues: Issues): void {
  const steps = config['steps'];
  if (Array.isArray(steps) && steps.length === 0) issues.add(['steps'], 'must contain at least one step');
  const firstPath = new Map<string, Path>();
  let recursionPath: Path | null = null;
  visitSteps(config, ({ id, path, step, position, group }) => {
    if (typeof id === 'string') {
      if (!ID_PATTERN.test(id)) issues.add([...path, 'id'], 'a step id may use only letters, digits, "_" and "-"');
      const first = firstPath.get(id);
      if (first) issues.add([...path, 'id'], `${JSON.stringify(id)} is already the id of ${formatPath(first)}`);
      else firstPath.set(id, path);
    }
    if (step['type'] === 'group') {
      if (Array.isArray(step['steps']) && step['steps'].length === 0) {
        issues.add([...path, 'steps'], 'a group must contain at least one step');
      }
      return;
    }
    checkNodes(step['nodes'], [...path, 'nodes'], index, issues);
    checkGate(step['continueIf'], [...path, 'continueIf'], issues);
    checkNoEmbeddedKnob(step['systemPrompt'], [...path, 'systemPrompt'], issues);
    if (isRecord(step['recursion'])) {
      const recursion = [...path, 'recursion'];
      if (group !== null) issues.add(recursion, 'a step inside a group cannot have recursion');
      else if (recursionPath) issues.add(recursion, `only one step may have recursion, and ${formatPath(recursionPath)} already does`);
      recursionPath ??= path;
      checkMaxDepth(step['recursion']['maxDepth'], [...recursion, 'maxDepth'], index, limits, issues);
    }
    checkFields(step['fields'], [...path, 'fields'], { id, type: step['type'], position, group }, index, issues);
  });
}

const NOT_A_REFERENCE = 'must be a whole number or exactly "{{knobs.<id>}}"';

/** Reports why a `nodes` or `maxDepth` string cannot stand for a knob of the expected type. */
function checkKnobValue(value: string, expected: 'nodes' | 'recursion', path: Path, index: LadderIndex, issues: Issues): void {
  const id = parseKnobReference(value);
  if (id === null) return issues.add(path, NOT_A_REFERENCE);
  const knob = index.knobs.get(id);
  if (!knob) {
    if (index.knobsComplete) issues.add(path, `no knob has id ${JSON.stringify(id)}`);
  } else if (typeof knob.type === 'string' && knob.type !== expected) {
    const key = expected === 'nodes' ? 'nodes' : 'maxDepth';
    issues.add(path, `knob ${JSON.stringify(id)} is a ${knob.type} knob, but ${key} needs a ${expected} knob`);
  }
}

function checkNodes(nodes: unknown, path: Path, index: LadderIndex, issues: Issues): void {
  if (typeof nodes === 'string') checkKnobValue(nodes, 'nodes', path, index, issues);
  else if (typeof nodes === 'number' && Number.isFinite(nodes) && !(Number.isInteger(nodes) && nodes >= 1)) {
    issues.add(path, 'must be a whole number of at least 1');
  }
}

function checkMaxDepth(depth: unknown, path: Path, index: LadderIndex, limits: ValidationLimits, issues: Issues): void {
  if (typeof depth === 'string') checkKnobValue(depth, 'recursion', path, index, issues);
  else if (typeof depth === 'number' && Number.isFinite(depth)) {
    if (!Number.isInteger(depth) || depth < 0 || depth > limits.maxRecursionDepth) {
      issues.add(path, `must be a whole number from 0 to ${limits.maxRecursionDepth}`);
    }
  }
}

function checkGate(continueIf: unknown, path: Path, issues: Issues): void {
  if (typeof continueIf !== 'string') return;
  if (continueIf.trim() === '') issues.add(path, 'must not be empty; remove continueIf to keep every node');
  else if (continueIf.trim() !== continueIf) {
    issues.add(
      path,
      `${JSON.stringify(continueIf)} starts or ends with white space, but outputs are trimmed before the comparison, so no node could pass`,
    );
  } else checkNoEmbeddedKnob(continueIf, path, issues);
}

function checkNoEmbeddedKnob(text: unknown, path: Path, issues: Issues): void {
  if (typeof text === 'string' && mentionsKnobReference(text)) {
    issues.add(
      path,
      'knob references work only as the whole value of nodes or recursion.maxDepth; use a knobInfo field to give a knob\'s value to the model',
    );
  }
}
