// Where in the text a validation error is. The validator names a path (`steps[2].nodes`,
// `knobs["a b"].steps[0]`, `config` for the whole document); the text, YAML or JSON (JSON is
// YAML too), is parsed by the `yaml` package with source ranges, and the path walked down to
// the deepest node that exists. Works on any object shaped like yaml's nodes, so it needs no
// import of its own.

export type PathSegment = string | number;

/** The leading path of a validator message and the rest of the sentence, or null when it has none. */
export function splitMessage(message: string): { path: PathSegment[]; text: string } | null {
  const head = /^(config|[A-Za-z0-9_-]+|\["(?:[^"\\]|\\.)*"\])((?:\.[A-Za-z0-9_-]+|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*): /.exec(message);
  if (!head) return null;
  const source = head[1] === 'config' ? head[2]! : head[1]! + head[2]!;
  const path: PathSegment[] = [];
  for (const token of source.matchAll(/\.?([A-Za-z0-9_-]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)) {
    if (token[1] !== undefined) path.push(token[1]);
    else if (token[2] !== undefined) path.push(Number(token[2]));
    else path.push(JSON.parse(token[3]!) as string);
  }
  return { path, text: message.slice(head[0].length) };
}

/** The parts of yaml's node classes this needs. */
interface YamlNodeLike {
  range?: [number, number, number] | null;
  items?: unknown[];
}
interface YamlPairLike {
  key: (YamlNodeLike & { value?: unknown }) | null;
  value: YamlNodeLike | null;
}
export interface YamlDocumentLike {
  contents: unknown;
}

const isPair = (x: unknown): x is YamlPairLike => typeof x === 'object' && x !== null && 'key' in x && 'value' in x;
const keyText = (key: YamlPairLike['key']) => (key && 'value' in key ? String(key.value) : null);

/**
 * The character offset the path points at: the key of the deepest map entry on the path
 * that exists (or the item of a list), so a message about a missing or unexpected key lands
 * on its parent's line.
 */
export function offsetOfPath(document: YamlDocumentLike, path: PathSegment[]): number {
  let node = document.contents as YamlNodeLike | null;
  let offset = node?.range?.[0] ?? 0;
  for (const segment of path) {
    const items = node?.items;
    if (!items) break;
    if (typeof segment === 'number') {
      const item = items[segment] as YamlNodeLike | undefined;
      if (!item || isPair(item)) break;
      node = item;
      offset = item.range?.[0] ?? offset;
    } else {
      const pair = items.find((p): p is YamlPairLike => isPair(p) && keyText(p.key) === segment);
      if (!pair) break;
      offset = pair.key?.range?.[0] ?? offset;
      node = pair.value;
    }
  }
  return offset;
}

/** 1-based line and column of a character offset. */
export function lineOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines.at(-1)!.length + 1 };
}

/** Line and column from a JSON.parse message ("... at position 42" or "(line 3 column 5)"). */
export function jsonErrorPosition(text: string, message: string): { line: number; column: number } | null {
  const lc = /line (\d+) column (\d+)/.exec(message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /position (\d+)/.exec(message);
  if (pos) return lineOf(text, Number(pos[1]));
  return null;
}
