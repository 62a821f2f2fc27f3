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

/**
 * The issues found, of which only the first `limit` in document order are kept: a huge broken
 * config is reported in bounded time and memory, however many issues it has. `count` counts
 * them all. Checks mostly report in document order, so most issues past the limit are
 * turned away by a single comparison with the last one kept.
 */
export class Issues {
  readonly items: Issue[] = [];
  count = 0;

  constructor(
    private readonly document: unknown = undefined,
    private readonly limit = Number.POSITIVE_INFINITY,
  ) {}

  add(path: Path, message: string): void {
    this.count++;
    const issue = { path, message };
    if (this.limit === Number.POSITIVE_INFINITY) {
      this.items.push(issue);
      return;
    }
    const kept = this.items;
    // Ties keep the order the checks produced them in: a later issue goes after its equals.
    if (kept.length >= this.limit && compareInDocument(this.document, path, kept.at(-1)!.path) >= 0) return;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compareInDocument(this.document, path, kept[middle]!.path) < 0) high = middle;
      else low = middle + 1;
    }
    kept.splice(low, 0, issue);
    if (kept.length > this.limit) kept.pop();
  }

  /** `<location>: <sentence>` for each kept issue, in document order. */
  messages(): string[] {
    const ordered = this.limit === Number.POSITIVE_INFINITY ? inDocumentOrderIssues(this.document, this.items) : this.items;
    return ordered.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  }
}

// Position of each key in its object, computed once per object that issues are compared in.
const keyPositions = new WeakMap<object, Map<string, number>>();

function keyPosition(record: Record<string, unknown>, key: string): number {
  let positions = keyPositions.get(record);
  if (!positions) {
    positions = new Map(Object.keys(record).map((name, index) => [name, index]));
    keyPositions.set(record, positions);
  }
  return positions.get(key) ?? Number.POSITIVE_INFINITY;
}

/**
 * Compares two locations by document position (pre-order, keys in their written order),
 * without mapping the whole document. A location that does not exist (a missing key) sorts
 * just after the content of its nearest existing ancestor.
 */
export function compareInDocument(document: unknown, a: Path, b: Path): number {
  let node = document;
  for (let i = 0; ; i++) {
    if (i === a.length || i === b.length) return a.length === b.length ? 0 : i === a.length ? -1 : 1;
    const position = (segment: string | number): number => {
      if (Array.isArray(node)) return typeof segment === 'number' && segment < node.length ? segment : Number.POSITIVE_INFINITY;
      return isRecord(node) && typeof segment === 'string' ? keyPosition(node, segment) : Number.POSITIVE_INFINITY;
    };
    const at = position(a[i]!);
    const bt = position(b[i]!);
    if (at !== bt) return at < bt ? -1 : 1;
    // Both under the same missing key: the same place.
    if (at === Number.POSITIVE_INFINITY) return 0;
    node = (node as Record<string | number, unknown>)[a[i]!];
  }
}

function inDocumentOrderIssues(document: unknown, issues: readonly Issue[]): Issue[] {
  return issues
    .map((issue, index) => ({ issue, index }))
    .sort((x, y) => compareInDocument(document, x.issue.path, y.issue.path) || x.index - y.index)
    .map(({ issue }) => issue);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sorts issues by document position; ties keep the order the checks produced them in. */
export function inDocumentOrder(document: unknown, issues: readonly Issue[]): string[] {
  return inDocumentOrderIssues(document, issues).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
}
