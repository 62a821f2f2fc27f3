// Small combinators for the schema phase: each check looks at one value, reports what is
// wrong with its type or shape, and never looks at what the value means.
import { type Issues, type Path, isRecord } from './validation-issues.js';

export type Check = (value: unknown, path: Path, issues: Issues) => void;

export interface Shape {
  /** Names the object in "unexpected property" sentences, e.g. "a knob". */
  what: string;
  required: Record<string, Check>;
  optional?: Record<string, Check>;
  /** Keys that belong elsewhere in the language, with a sentence saying so. */
  misplaced?: Record<string, string>;
  /** When the object's kind is unknown, other keys are not reported (they would be noise). */
  ignoreOtherKeys?: boolean;
}

export const anything: Check = () => {};

export const string: Check = (value, path, issues) => {
  if (typeof value !== 'string') issues.add(path, 'must be a string');
};

export const nonEmptyString: Check = (value, path, issues) => {
  if (typeof value !== 'string' || value === '') issues.add(path, 'must be a non-empty string');
};

export const boolean: Check = (value, path, issues) => {
  if (typeof value !== 'boolean') issues.add(path, 'must be true or false');
};

export const number: Check = (value, path, issues) => {
  if (typeof value !== 'number') issues.add(path, 'must be a number');
  else if (!Number.isFinite(value)) issues.add(path, 'must be a finite number');
};

/** A literal number or a `{{knobs.<id>}}` string; which of the two is right is a meaning check. */
export const numberOrKnobReference: Check = (value, path, issues) => {
  if (typeof value === 'string') return;
  if (typeof value !== 'number') issues.add(path, 'must be a number or a knob reference "{{knobs.<id>}}"');
  else number(value, path, issues);
};

export function listOfChoices(choices: readonly string[]): string {
  const quoted = choices.map((choice) => JSON.stringify(choice));
  return quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

export function oneOf(choices: readonly string[]): Check {
  return (value, path, issues) => {
    if (typeof value === 'string' && choices.includes(value)) return;
    const got = typeof value === 'string' ? `, not ${JSON.stringify(value)}` : '';
    issues.add(path, `must be ${listOfChoices(choices)}${got}`);
  };
}

export function arrayOf(item: Check): Check {
  return (value, path, issues) => {
    if (!Array.isArray(value)) issues.add(path, 'must be an array');
    else value.forEach((element, index) => item(element, [...path, index], issues));
  };
}

export function recordOf(item: Check): Check {
  return (value, path, issues) => {
    if (!isRecord(value)) issues.add(path, 'must be an object');
    else for (const [key, element] of Object.entries(value)) item(element, [...path, key], issues);
  };
}

function keyList(keys: string[]): string {
  return keys.length === 1 ? keys[0]! : `${keys.slice(0, -1).join(', ')} and ${keys.at(-1)}`;
}

const knownKeysOf = new WeakMap<Shape, Map<string, Check>>();

function knownKeys(shape: Shape): Map<string, Check> {
  let known = knownKeysOf.get(shape);
  if (!known) {
    known = new Map(Object.entries({ ...shape.required, ...shape.optional }));
    knownKeysOf.set(shape, known);
  }
  return known;
}

/** Checks an object against a shape; returns the object when it is one, for further checks. */
export function checkObject(
  value: unknown,
  path: Path,
  issues: Issues,
  shape: Shape,
): Record<string, unknown> | null {
  if (!isRecord(value)) {
    issues.add(path, 'must be an object');
    return null;
  }
  const known = knownKeys(shape);
  for (const [key, item] of Object.entries(value)) {
    const check = known.get(key);
    if (check) check(item, [...path, key], issues);
    else if (shape.misplaced?.[key]) issues.add([...path, key], shape.misplaced[key]);
    else if (!shape.ignoreOtherKeys) {
      issues.add([...path, key], `unexpected property; ${shape.what} has only ${keyList([...known.keys()])}`);
    }
  }
  for (const key of Object.keys(shape.required)) {
    if (!(key in value)) issues.add([...path, key], 'is required');
  }
  return value;
}

export function object(shape: Shape): Check {
  return (value, path, issues) => {
    checkObject(value, path, issues, shape);
  };
}
