// STYLE.md, "Shape": no import cycles in src/. Type-only imports count too: they are erased at
// run time, but they still bind two modules to each other, and a cycle of them is how a layer
// (the ladder language) starts to depend on what depends on it (the engine).
// Dynamic `import()` counts as well: lazy loading changes when a module loads, not what it needs.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

// `import ... from './x.js'`, `export ... from './x.js'` (statements may span lines),
// `import './x.js'` and `import('./x.js')`; relative specifiers only.
const SPECIFIERS = [
  /^\s*(?:import|export)\s[^;]*?\sfrom\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
  /^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
  /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Module graph of src/: file → the src files it imports, as paths relative to src/. */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = new Set<string>();
    for (const pattern of SPECIFIERS) {
      for (const match of text.matchAll(pattern)) {
        const target = resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts'));
        if (known.has(target)) targets.add(relative(src, target));
      }
    }
    graph.set(relative(src, file), [...targets].sort());
  }
  return graph;
}

/** One cycle per back edge met in a depth-first walk, each written `a → b → a`. */
function findCycles(graph: Map<string, string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('source layout', () => {
  it('the cycle finder reports a cycle it is shown', () => {
    const graph = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]);
    expect(findCycles(graph)).toEqual(['a.ts → b.ts → c.ts → a.ts']);
  });

  it('src/ has no import cycles', () => {
    const graph = importGraph(sourceFiles(src));
    expect(graph.size).toBeGreaterThan(50);
    expect(findCycles(graph), 'import cycles in src/').toEqual([]);
  });

  it('the ladder language does not import from the engine that runs it', () => {
    const graph = importGraph(sourceFiles(src));
    const upward = [...graph].flatMap(([file, targets]) =>
      file.startsWith('ladders/language/') ? targets.filter((t) => t.startsWith('ladders/engine/')).map((t) => `${file} → ${t}`) : [],
    );
    expect(upward).toEqual([]);
  });
});
