// Fenced code blocks of the Markdown pages, and the comparisons the examples test makes.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  /** `file#the block's start`: what the test's table keys blocks by (stable when lines move). */
  key: string;
}

export const PAGES = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))];

export function blocksOf(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  let open: { line: number; lang: string; indent: number; body: string[] } | null = null;
  lines.forEach((raw, i) => {
    const fence = /^( *)```(\S*)\s*$/.exec(raw);
    if (fence && !open) open = { line: i + 1, lang: fence[2]!, indent: fence[1]!.length, body: [] };
    else if (fence && open) {
      const text = open.body.map((l) => l.slice(open!.indent)).join('\n');
      blocks.push({ file, line: open.line, lang: open.lang, text, key: `${file}#${text.replace(/\s+/g, ' ').trim().slice(0, 60)}` });
      open = null;
    } else open?.body.push(raw);
  });
  return blocks;
}

/** The JSON of a documentation block, where `[ ... ]` stands for elements left out. */
export function docJson(text: string): unknown {
  return JSON.parse(text.replace(/\[\s*\.\.\.\s*\]/g, '[]'));
}

/**
 * Whether `actual` has the shape the page shows: the same members at every level (an empty
 * array on the page matches any array), and the same JSON type where both are not null.
 */
export function shapeDifferences(doc: unknown, actual: unknown, at = '$'): string[] {
  if (doc === null || actual === null) return [];
  if (Array.isArray(doc)) {
    if (!Array.isArray(actual)) return [`${at}: the page shows an array, the service answers ${JSON.stringify(actual)}`];
    return doc.length === 0 || actual.length === 0 ? [] : actual.flatMap((item, i) => shapeDifferences(doc[0], item, `${at}[${i}]`));
  }
  if (typeof doc === 'object') {
    if (typeof actual !== 'object' || Array.isArray(actual)) return [`${at}: the page shows an object, the service answers ${JSON.stringify(actual)}`];
    const shown = Object.keys(doc);
    const answered = Object.keys(actual);
    return [
      ...answered.filter((k) => !shown.includes(k)).map((k) => `${at}.${k}: answered, not on the page`),
      ...shown.filter((k) => !answered.includes(k)).map((k) => `${at}.${k}: on the page, not answered`),
      ...shown.filter((k) => answered.includes(k)).flatMap((k) => shapeDifferences((doc as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k], `${at}.${k}`)),
    ];
  }
  return typeof doc === typeof actual ? [] : [`${at}: the page shows a ${typeof doc}, the service answers ${JSON.stringify(actual)}`];
}

/** Whether `fragment` occurs in `whole`: as a subtree, or (an object) as some object's members. */
export function occursIn(fragment: unknown, whole: unknown): boolean {
  if (isDeepStrictEqual(fragment, whole)) return true;
  if (fragment && whole && typeof fragment === 'object' && typeof whole === 'object' && !Array.isArray(fragment) && !Array.isArray(whole)) {
    const members = Object.entries(fragment);
    if (members.every(([k, v]) => isDeepStrictEqual((whole as Record<string, unknown>)[k], v))) return true;
  }
  if (whole && typeof whole === 'object') return Object.values(whole).some((child) => occursIn(fragment, child));
  return false;
}

/** Whether a block is an example the test must cover: shell or JSON (untagged ones that start with a command too). */
export const isExample = (b: Block) => /^(sh|bash|shell|json)$/.test(b.lang) || (b.lang === '' && /^(curl|npx|npm|docker) /.test(b.text));

/** The JSON values curl printed one after another (bodies without a newline between them). */
export function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (depth++ === 0) start = i;
    } else if ((c === '}' || c === ']') && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}

/** The status line, headers (names in lower case) and JSON body of an answer, as `curl -i` prints it and a page shows it. */
export function httpAnswer(text: string): { status: string; headers: Record<string, string>; body: any } {
  const [head, ...rest] = text.replace(/\r\n/g, '\n').split('\n\n');
  const [status, ...lines] = head!.split('\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: status!.trim(), headers, body: JSON.parse(rest.join('\n\n')) };
}
