// What the playground's editor offers to complete in a ladder config: the ids of the
// document's own steps (after `stepId:` and `exit:`), its knob ids (in `{{knobs.` and a
// knobInfo field's `from:`), and the language's words for `type:` (of a step, a field or a
// knob), `loopRef:`, `nodeRef:`, `input:` and `strategy:`. Works on YAML and JSON alike: the
// page's yaml parser (passed in, as in locate.ts) gives each key's place in the document.
import type { Suggestions } from './suggestions.js';
import type { PathSegment } from './locate.js';

export const STEP_TYPES = ['normal', 'sequential', 'group'];
export const FIELD_TYPES = ['text', 'ingest', 'multi_ingest', 'knobInfo', 'nodeInfo'];
export const KNOB_TYPES = ['loops', 'recursion', 'nodes', 'generic'];
const WORDS: Record<string, string[]> = {
  loopRef: ['current', 'previous', 'accumulate'],
  nodeRef: ['previous', 'accumulate'],
  strategy: ['universal', 'constrained'],
};

/** The parts of yaml's Document and nodes this needs. */
interface NodeLike {
  range?: [number, number, number] | null;
  items?: unknown[];
  value?: unknown;
}
interface PairLike {
  key: NodeLike | null;
  value: NodeLike | null;
}
export interface ParsedLike {
  contents: unknown;
  toJS(): unknown;
}

const isPair = (x: unknown): x is PairLike => typeof x === 'object' && x !== null && 'key' in x && 'value' in x;
const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The path of keys and indexes down to the pair the offset is in, and the map that holds it. */
function pathAt(document: ParsedLike, offset: number): { path: PathSegment[]; map: NodeLike | null } {
  const path: PathSegment[] = [];
  let node = document.contents as NodeLike | null;
  let map: NodeLike | null = null;
  while (node?.items) {
    const index = node.items.findIndex((item) => {
      const range = isPair(item) ? [item.key?.range?.[0], (item.value ?? item.key)?.range?.[1]] : (item as NodeLike | null)?.range;
      return range?.[0] !== undefined && range[1] !== undefined && range[0] <= offset && offset <= range[1];
    });
    if (index < 0) break;
    const item = node.items[index];
    if (isPair(item)) {
      map = node;
      path.push(String(item.key?.value));
      node = item.value;
    } else {
      path.push(index);
      node = item as NodeLike;
    }
  }
  return { path, map };
}

/** The config's step ids (group children included, groups themselves left out: they have no output) and knobs. */
function declared(document: ParsedLike): { steps: string[]; knobs: Array<[string, string]> } {
  let config: unknown;
  try {
    config = document.toJS();
  } catch {
    return { steps: [], knobs: [] };
  }
  if (!isRecord(config)) return { steps: [], knobs: [] };
  const steps: string[] = [];
  const visit = (list: unknown) => {
    for (const step of Array.isArray(list) ? list : []) {
      if (!isRecord(step)) continue;
      if (step.type === 'group') visit(step.steps);
      else if (typeof step.id === 'string' && step.id) steps.push(step.id);
    }
  };
  visit(config.steps);
  const knobs = isRecord(config.knobs) ? Object.entries(config.knobs).map(([id, knob]): [string, string] => [id, isRecord(knob) && typeof knob.type === 'string' ? knob.type : 'knob']) : [];
  return { steps, knobs };
}

const words = (labels: string[], detail: string) => labels.map((label) => ({ label, detail, type: 'keyword' }));

export function ladderSuggestions(text: string, pos: number, parse: (text: string) => ParsedLike): Suggestions | null {
  const before = text.slice(text.lastIndexOf('\n', pos - 1) + 1, pos);
  const knobReference = /\{\{\s*knobs\.([\w-]*)$/.exec(before);
  const keyValue = /(?:^|[\s{,])["']?([A-Za-z]+)["']?\s*:\s*["']?([\w.-]*)$/.exec(before);
  if (!knobReference && !keyValue) return null;
  const word = knobReference ? knobReference[1]! : keyValue![2]!;
  const from = pos - word.length;
  // A value must be there for the key to have a place in the document.
  const document = parse(word ? text : `${text.slice(0, pos)}x${text.slice(pos)}`);
  const { steps, knobs } = declared(document);
  const knobIds = () => knobs.map(([id, type]) => ({ label: id, detail: `${type} knob`, type: 'variable' }));
  if (knobReference) return { from, options: knobIds() };

  const key = keyValue![1]!;
  const { path, map } = pathAt(document, from);
  if (path.at(-1) !== key) return null;
  const sibling = (name: string) => {
    const pair = map?.items?.find((p): p is PairLike => isPair(p) && p.key?.value === name);
    return pair?.value?.value;
  };
  const stepIds = () => ({ from, options: steps.map((id) => ({ label: id, detail: 'step', type: 'variable' })) });
  const inFields = path.includes('fields');
  switch (key) {
    case 'stepId':
      return stepIds();
    case 'exit':
      return path.length === 1 ? stepIds() : null;
    case 'type':
      if (inFields) return { from, options: words(FIELD_TYPES, 'field type') };
      if (path[0] === 'knobs' && path.length === 3) return { from, options: words(KNOB_TYPES, 'knob type') };
      if (path[0] === 'steps') return { from, options: words(STEP_TYPES, 'step type') };
      return null;
    case 'from':
      if (inFields && sibling('type') === 'knobInfo') return { from, options: knobIds() };
      if (inFields && sibling('type') === 'text') return { from, options: words(['input.context'], 'the ladder’s input') };
      return null;
    case 'input':
      return path[0] === 'knobs' ? { from, options: words(['slider'], 'knob input') } : null;
    default:
      return WORDS[key] ? { from, options: words(WORDS[key], key) } : null;
  }
}
