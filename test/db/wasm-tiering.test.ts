import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { defaultTieringBudget, withStartupTiering } from '../../src/db/wasm-tiering.js';

describe('the WebAssembly tiering budget around PGlite\'s start', () => {
  // The budget put back after the start must be V8's own, on every Node this runs on (CI: 20, 22, 24, 26).
  it('puts back exactly the default this Node\'s V8 prints', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    const printed = /--wasm-tiering-budget \(.*\)\s+type: int\s+default: --wasm-tiering-budget=(\d+)/.exec(options);
    expect(printed).not.toBeNull();
    expect(defaultTieringBudget()).toBe(Number(printed![1]));
  });

  it('knows both defaults by V8 version', () => {
    expect(defaultTieringBudget('11.3.244.8-node.38')).toBe(1_800_000);
    expect(defaultTieringBudget('12.4.254.21-node.57')).toBe(13_000_000);
    expect(defaultTieringBudget('14.6.202.34-node.34')).toBe(13_000_000);
  });

  it('answers what the start answers, and its failure', async () => {
    await expect(withStartupTiering(async () => 'opened')).resolves.toBe('opened');
    await expect(withStartupTiering(async () => Promise.reject(new Error('no database')))).rejects.toThrow('no database');
  });
});
