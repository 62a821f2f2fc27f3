// The bundled server's main thread does not load PGlite (scripts/bundle-server.mjs gives
// drizzle's PGlite driver src/db/drizzle-pglite-imports.ts instead): what that module stands in
// for must be what PGlite exports, and the bundle must hold to it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { types as pgliteTypes } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { PGlite, types } from '../../src/db/drizzle-pglite-imports.js';

const bundle = path.resolve('dist/server');

/** Every module a bundled entry loads, by static or dynamic import, and what each imports from outside the bundle. */
function importsOf(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const code = readFileSync(path.join(bundle, file), 'utf8');
    // esbuild's output: `import ... from "x";` or `import "x";` at a line's start, `import("x")` anywhere.
    for (const match of code.matchAll(/^import[^;]*?from\s*"([^"]+)"|^import\s*"([^"]+)"|\bimport\("([^"]+)"\)/gm)) {
      const specifier = (match[1] ?? match[2] ?? match[3])!;
      if (specifier.startsWith('./')) visit(specifier.slice(2));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files, packages };
}

describe("drizzle's PGlite driver in the bundle", () => {
  it('gets the type oids PGlite itself exports', () => {
    for (const [name, oid] of Object.entries(types)) expect([name, oid]).toEqual([name, pgliteTypes[name as keyof typeof pgliteTypes]]);
    expect(Object.keys(types).sort()).toEqual(['DATE', 'INTERVAL', 'TIMESTAMP', 'TIMESTAMPTZ']);
  });

  it('refuses to open a database itself', () => {
    expect(() => new PGlite()).toThrow('drizzle-orm/pglite was asked to open a database itself: pass it the client (src/db/client.ts)');
  });

  it('leaves PGlite to the database thread: nothing the main thread loads imports it', () => {
    const { files, packages } = importsOf('server.js');
    // The walk sees the chunks: the entry, the HTTP stack and drizzle's driver among them.
    expect(files.size).toBeGreaterThan(10);
    expect([...files].some((file) => readFileSync(path.join(bundle, file), 'utf8').includes('drizzle-orm/pglite was asked'))).toBe(true);
    expect(packages.has('pg')).toBe(true);
    expect(packages.has('@electric-sql/pglite')).toBe(false);
    expect(files.has('pglite-thread-entry.js')).toBe(false);
    // The thread's entry turns source maps off, then loads PGlite through the thread's module.
    const thread = readFileSync(path.join(bundle, 'pglite-thread-entry.js'), 'utf8');
    expect(thread).toContain('process.setSourceMapsEnabled(false)');
    expect(importsOf('pglite-thread-entry.js').packages.has('@electric-sql/pglite')).toBe(true);
  });
});
