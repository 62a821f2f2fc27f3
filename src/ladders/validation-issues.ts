// Locations and ordering of validation errors. Every error is `<location>: <sentence>`, and
// errors are reported in the order their locations appear in the submitted document.

export type Path = readonly (string | number)[];

export interface Issue {
  path: Path;
  message: string;
}

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/** `steps[2].fields[0].from.stepId`; odd keys are quoted: `knobs["a b"]`. */
export function formatPath(path: Path): string {
  if (path.length === 0) return 'config';
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (!PLAIN_KEY.test(segment)) text += `[${JSON.stringify(segment)}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}

export class Issues {
  readonly items: Issue[] = [];

  add(path: Path, message: string): void {
    this.items.push({ path, message });
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sorts issues by document position (pre-order, keys in their written order). An issue about
 * a missing key sorts just after the content of its nearest existing ancestor; ties keep
 * the order the checks produced them in.
 */
export function inDocumentOrder(document: unknown, issues: readonly Issue[]): string[] {
  // Mapping the document costs more than validating it; a clean config skips it.
  if (issues.length === 0) return [];
  const spans = new Map<string, { start: number; end: number }>();
  let counter = 0;
  // Paths are keyed incrementally (no array copies), which keeps large documents linear.
  const visit = (value: unknown, key: string): void => {
    const start = counter++;
    if (Array.isArray(value)) value.forEach((item, index) => visit(item, `${key}/${index}`));
    else if (isRecord(value)) for (const [name, item] of Object.entries(value)) visit(item, `${key}/${JSON.stringify(name)}`);
    spans.set(key, { start, end: counter });
  };
  visit(document, '');
  const keyOf = (path: Path) => path.map((s) => (typeof s === 'number' ? `/${s}` : `/${JSON.stringify(s)}`)).join('');

  const rank = (path: Path): number => {
    const exact = spans.get(keyOf(path));
    if (exact) return exact.start;
    for (let length = path.length - 1; length >= 0; length--) {
      const ancestor = spans.get(keyOf(path.slice(0, length)));
      if (ancestor) return ancestor.end - 0.5;
    }
    return Number.MAX_SAFE_INTEGER;
  };
  return issues
    .map((issue, index) => ({ issue, index, rank: rank(issue.path) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ issue }) => `${formatPath(issue.path)}: ${issue.message}`);
}
