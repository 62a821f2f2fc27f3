// Meaning checks for a step's fields: what each field reads, and whether it may read it.
import { mentionsKnobReference, parseKnobReference } from './knob-reference.js';
import type { LadderIndex, StepEntry } from './ladder-index.js';
import { type Issues, type Path, isRecord } from './validation-issues.js';

/** The dot paths a text field may read. Closed on purpose: an unknown path is a typo. */
export const TEXT_SOURCES = ['input.context'] as const;

export interface Reader {
  id: unknown;
  type: unknown;
  position: number;
  group: string | null;
}

export function checkFields(fields: unknown, path: Path, reader: Reader, index: LadderIndex, issues: Issues): void {
  if (!Array.isArray(fields)) return;
  fields.forEach((field, i) => {
    if (!isRecord(field)) return;
    const fieldPath = [...path, i];
    const from = field['from'];
    switch (field['type']) {
      case 'text':
        if (typeof from === 'string' && !(TEXT_SOURCES as readonly string[]).includes(from)) {
          issues.add([...fieldPath, 'from'], `unknown source ${JSON.stringify(from)}; the only text source is "input.context"`);
        }
        break;
      case 'knobInfo':
        checkKnobInfo(from, [...fieldPath, 'from'], index, issues);
        break;
      case 'ingest':
      case 'multi_ingest':
        if (isRecord(from)) checkSource(from, field['type'], [...fieldPath, 'from'], reader, index, issues);
        break;
    }
  });
}

function checkKnobInfo(from: unknown, path: Path, index: LadderIndex, issues: Issues): void {
  if (typeof from !== 'string') return;
  const referenced = parseKnobReference(from);
  if (referenced !== null || mentionsKnobReference(from)) {
    const id = referenced ?? 'id';
    issues.add(path, `write the knob id alone, as ${JSON.stringify(id)}, not as a knob reference`);
  } else if (index.knobsComplete && !index.knobs.has(from)) {
    issues.add(path, `no knob has id ${JSON.stringify(from)}`);
  }
}

function checkSource(
  from: Record<string, unknown>,
  fieldType: 'ingest' | 'multi_ingest',
  path: Path,
  reader: Reader,
  index: LadderIndex,
  issues: Issues,
): void {
  const { stepId, nodeRef } = from;
  const loopRef = from['loopRef'] ?? 'current';
  const accumulatesPasses = loopRef === 'accumulate';
  const accumulatesNodes = nodeRef === 'accumulate';
  // A multi_ingest needs no accumulate: without one it lists the surviving nodes of one pass.

  if (fieldType === 'ingest') {
    if (accumulatesPasses) issues.add([...path, 'loopRef'], '"accumulate" needs a multi_ingest field; an ingest field reads one output');
    if (accumulatesNodes) issues.add([...path, 'nodeRef'], '"accumulate" needs a multi_ingest field; an ingest field reads one output');
  }

  const selfRead = typeof stepId === 'string' && stepId === reader.id;
  const selfCurrent = selfRead && loopRef === 'current';
  // A normal step reading itself this pass is reported once, by checkOrder, on stepId.
  const allowsPreviousNode = selfCurrent && (reader.type === 'sequential' || reader.type === 'normal');
  if (nodeRef === 'previous' && !allowsPreviousNode) {
    issues.add([...path, 'nodeRef'], '"previous" is only for a sequential step reading its own previous node');
  }
  if (typeof nodeRef === 'number' && (!Number.isInteger(nodeRef) || nodeRef < 1)) {
    issues.add([...path, 'nodeRef'], 'must be a whole number of at least 1');
  }

  if (typeof stepId !== 'string') return;
  const target = index.steps.get(stepId);
  if (!target) {
    if (index.stepsComplete) issues.add([...path, 'stepId'], `no step has id ${JSON.stringify(stepId)}`);
    return;
  }
  if (target.step['type'] === 'group') {
    issues.add([...path, 'stepId'], `${JSON.stringify(stepId)} is a group, which has no output of its own; read one of its child steps`);
    return;
  }
  checkOrder(target, loopRef, nodeRef, path, reader, issues);
  if (typeof nodeRef === 'number' && Number.isInteger(nodeRef) && nodeRef >= 1) {
    checkNodeNumber(target, nodeRef, [...path, 'nodeRef'], index, issues);
  }
}

function checkOrder(target: StepEntry, loopRef: unknown, nodeRef: unknown, path: Path, reader: Reader, issues: Issues): void {
  if (loopRef !== 'current') return;
  const name = JSON.stringify(target.id);
  if (target.id === reader.id) {
    if (reader.type === 'normal') {
      issues.add(
        [...path, 'stepId'],
        'a normal step cannot read its own output in the current pass; only a sequential step can, with nodeRef "previous"',
      );
    } else if (reader.type === 'sequential' && nodeRef !== 'previous') {
      issues.add([...path, 'nodeRef'], 'a sequential step reading itself in the current pass needs nodeRef "previous"');
    }
  } else if (target.position === reader.position && target.group !== null && target.group === reader.group) {
    issues.add(
      [...path, 'stepId'],
      `${name} runs beside this step in group ${JSON.stringify(target.group)}; read it with loopRef "previous" or "accumulate"`,
    );
  } else if (target.position > reader.position) {
    issues.add([...path, 'stepId'], `${name} runs after this step; read it with loopRef "previous" or "accumulate"`);
  }
}

function checkNodeNumber(target: StepEntry, nodeRef: number, path: Path, index: LadderIndex, issues: Issues): void {
  const nodes = target.step['nodes'] ?? 1;
  const name = JSON.stringify(target.id);
  const plural = (count: number) => (count === 1 ? '1 node' : `${count} nodes`);
  if (typeof nodes === 'number') {
    if (Number.isInteger(nodes) && nodes >= 1 && nodeRef > nodes) issues.add(path, `step ${name} has only ${plural(nodes)}`);
    return;
  }
  const knobId = parseKnobReference(nodes);
  const knob = knobId === null ? undefined : index.knobs.get(knobId);
  if (!knob || knob.type !== 'nodes' || knob.values.length === 0) return;
  const most = Math.max(...knob.values);
  if (nodeRef > most) issues.add(path, `step ${name} has at most ${plural(most)} (knob ${JSON.stringify(knob.id)})`);
}
