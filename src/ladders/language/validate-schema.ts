// Phase one: required keys, types, enum values and no unexpected properties, everywhere.
import {
  type Check,
  type Shape,
  anything,
  arrayOf,
  boolean,
  checkObject,
  nonEmptyString,
  number,
  numberOrKnobReference,
  object,
  oneOf,
  recordOf,
  string,
} from './schema-checks.js';
import { type Issues, type Path, isRecord } from './validation-issues.js';

const MODEL_STEP_TYPES = ['normal', 'sequential'] as const;
const STEP_TYPES = ['normal', 'sequential', 'group'] as const;
const FIELD_TYPES = ['text', 'ingest', 'multi_ingest', 'knobInfo', 'nodeInfo'] as const;

const stepSource = object({
  what: 'a step source',
  required: { stepId: string },
  optional: {
    loopRef: oneOf(['current', 'previous', 'accumulate']),
    nodeRef: (value, path, issues) => {
      if (value === 'previous' || value === 'accumulate') return;
      if (typeof value === 'number') number(value, path, issues);
      else issues.add(path, 'must be a node number, "previous" or "accumulate"');
    },
  },
});

const fieldShapes: Record<(typeof FIELD_TYPES)[number], Shape> = {
  text: { what: 'a text field', required: { name: nonEmptyString, type: anything, from: string } },
  ingest: {
    what: 'an ingest field',
    required: { name: nonEmptyString, type: anything, from: stepSource },
    optional: { skipFirstNode: boolean },
  },
  multi_ingest: { what: 'a multi_ingest field', required: { name: nonEmptyString, type: anything, from: stepSource } },
  knobInfo: { what: 'a knobInfo field', required: { name: nonEmptyString, type: anything, from: string } },
  nodeInfo: {
    what: 'a nodeInfo field',
    required: { name: nonEmptyString, type: anything },
    misplaced: { from: 'a nodeInfo field has no from; its value is always the node number' },
  },
};

// Built once: a config can hold tens of thousands of fields.
const fieldShapesWithMisplaced: Record<string, Shape> = Object.fromEntries(
  Object.entries(fieldShapes).map(([type, shape]) => [
    type,
    { ...shape, misplaced: { skipFirstNode: 'only an ingest field may have skipFirstNode', ...shape.misplaced } },
  ]),
);

const field: Check = (value, path, issues) => {
  const type = isRecord(value) ? value['type'] : undefined;
  const shape = typeof type === 'string' && Object.hasOwn(fieldShapesWithMisplaced, type) ? fieldShapesWithMisplaced[type] : undefined;
  if (!shape) {
    checkObject(value, path, issues, {
      what: 'a field',
      required: { name: nonEmptyString, type: oneOf(FIELD_TYPES) },
      ignoreOtherKeys: true,
    });
    return;
  }
  checkObject(value, path, issues, shape);
};

const groupOwnsNothing = (key: string) => `a group step cannot have ${key}; only its child steps can`;

const modelStepShape = (type: string): Shape => ({
  what: `a ${type} step`,
  required: { id: string, name: string, type: anything },
  optional: {
    fields: arrayOf(field),
    systemPrompt: string,
    nodes: numberOrKnobReference,
    continueIf: string,
    timeline: anything,
    recursion: object({ what: 'recursion', required: { maxDepth: numberOrKnobReference } }),
  },
  misplaced: { steps: 'only a group step has child steps' },
});

const modelStepShapes: Record<string, Shape> = Object.fromEntries(MODEL_STEP_TYPES.map((type) => [type, modelStepShape(type)]));

const childStep: Check = (value, path, issues) => step(value, path, issues, MODEL_STEP_TYPES);
const groupShape: Shape = {
  what: 'a group step',
  required: { id: string, name: string, type: anything, steps: arrayOf(childStep) },
  optional: { timeline: anything },
  misplaced: Object.fromEntries(
    ['fields', 'systemPrompt', 'nodes', 'continueIf', 'recursion'].map((key) => [key, groupOwnsNothing(key)]),
  ),
};

function step(value: unknown, path: Path, issues: Issues, allowed: readonly string[]): void {
  const type = isRecord(value) ? value['type'] : undefined;
  if (typeof type === 'string' && allowed.includes(type)) {
    checkObject(value, path, issues, type === 'group' ? groupShape : modelStepShapes[type]!);
    return;
  }
  const typeCheck: Check =
    type === 'group'
      ? (_value, typePath, out) => out.add(typePath, 'a group may contain only normal and sequential steps')
      : oneOf(allowed);
  checkObject(value, path, issues, {
    what: 'a step',
    required: { id: string, name: string, type: typeCheck },
    ignoreOtherKeys: true,
  });
}

const knob = object({
  what: 'a knob',
  required: {
    name: string,
    type: oneOf(['loops', 'recursion', 'nodes', 'generic']),
    steps: arrayOf(
      object({ what: 'a knob step', required: { title: string, value: number }, optional: { default: boolean } }),
    ),
  },
  optional: { input: oneOf(['slider']), description: string },
});

const stringList = arrayOf(string);

const allowedTargets: Check = (value, path, issues) => {
  const strategy = isRecord(value) ? value['strategy'] : undefined;
  const strategyCheck = oneOf(['universal', 'constrained']);
  if (strategy === 'universal') {
    const noList = 'a universal allowedTargets accepts every model and lists nothing';
    checkObject(value, path, issues, {
      what: 'a universal allowedTargets',
      required: { strategy: strategyCheck },
      misplaced: { providers: noList, models: noList },
    });
  } else if (strategy === 'constrained') {
    checkObject(value, path, issues, {
      what: 'a constrained allowedTargets',
      required: { strategy: strategyCheck, providers: stringList, models: stringList },
    });
  } else {
    checkObject(value, path, issues, {
      what: 'allowedTargets',
      required: { strategy: strategyCheck },
      optional: { providers: stringList, models: stringList },
    });
  }
};

const configShape: Shape = {
  what: 'a ladder config',
  required: {
    name: nonEmptyString,
    exit: string,
    steps: arrayOf((value, path, issues) => step(value, path, issues, STEP_TYPES)),
  },
  optional: {
    description: string,
    allowedTargets,
    knobs: recordOf(knob),
    executionBudget: object({ what: 'executionBudget', required: { maxSpend: number } }),
  },
};

/** Reports every type and shape problem; the config's root must already be an object. */
export function validateSchema(config: Record<string, unknown>, issues: Issues): void {
  checkObject(config, [], issues, configShape);
}
