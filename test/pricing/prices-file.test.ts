// Issue 10, item 5: PRICES_FILE adds or overrides model prices without a release, and a bad
// file stops the boot with a message naming the setting, the model and the member.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { costOf, createPriceTable, priceOf } from '../../src/pricing/prices.js';

const dir = mkdtempSync(path.join(tmpdir(), 'prices-file-'));
function file(name: string, text: string): string {
  const full = path.join(dir, name);
  writeFileSync(full, text);
  return full;
}
const configWith = (pricesFile: string) => loadConfig({ PRICES_FILE: pricesFile });

describe('PRICES_FILE', () => {
  it('adds new models and overrides built-in ones; UNKNOWN_MODEL_PRICE_* still prices the rest', () => {
    const config = loadConfig({
      PRICES_FILE: file('ok.json', JSON.stringify({ 'My-Model': { input: 1, output: 2 }, 'gpt-4o': { input: 0, output: 0 }, r1: { input: 1, output: 2, cached_input: 0.1, reasoning: 3 } })),
      UNKNOWN_MODEL_PRICE_INPUT: '7',
      UNKNOWN_MODEL_PRICE_OUTPUT: '9',
    });
    const table = createPriceTable({ unknownModel: config.ladders.unknownModelPrice, models: config.usage.priceOverrides });
    expect(priceOf('my-model', table)).toEqual({ input: 1, output: 2 });
    expect(priceOf('my-model-2026-01-01', table)).toEqual({ input: 1, output: 2 });
    expect(costOf('gpt-4o-2024-08-06', { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 }, table)).toBe(0);
    expect(priceOf('gpt-4o-mini', table)).toEqual({ input: 0.15, output: 0.6, cachedInput: 0.075 });
    expect(priceOf('r1', table)).toEqual({ input: 1, output: 2, cachedInput: 0.1, reasoning: 3 });
    expect(priceOf('no-such-model', table)).toEqual({ input: 7, output: 9 });
  });

  it.each([
    ['missing.json', null, /PRICES_FILE=".*missing\.json": cannot be read: ENOENT/],
    ['syntax.json', '{"a": ', /PRICES_FILE=".*syntax\.json": is not valid JSON/],
    ['array.json', '[]', /must be a JSON object mapping model names/],
    ['negative.json', '{"m": {"input": -1, "output": 2}}', /"m"\.input: must be a number of USD per million tokens, 0 or more, got -1/],
    ['missing-member.json', '{"m": {"input": 1}}', /"m"\.output: missing/],
    ['extra-member.json', '{"m": {"input": 1, "output": 1, "cached": 0.5}}', /"m"\.cached: unknown member/],
    ['string.json', '{"m": {"input": "1", "output": 1}}', /"m"\.input: .* got "1"/],
    ['cached.json', '{"m": {"input": 1, "output": 1, "cached_input": -0.5}}', /"m"\.cached_input: must be a number of USD per million tokens, 0 or more, got -0.5/],
    ['member.json', '{"m": {"input": 1, "output": 1, "cache": 1}}', /"m"\.cache: unknown member \(only "input", "output", "cached_input" and "reasoning" are allowed\)/],
    ['decimals.json', '{"m": {"input": 0.0000000001, "output": 1}}', /"m"\.input: at most 9 decimals \(whole nano-dollars per million tokens\), got 1e-10/],
    ['twice.json', '{"M": {"input": 1, "output": 1}, "m": {"input": 1, "output": 1}}', /"m": listed twice/],
  ])('%s stops the boot naming the problem', (name, text, message) => {
    const full = text === null ? path.join(dir, name) : file(name, text);
    expect(() => configWith(full)).toThrow(ConfigError);
    expect(() => configWith(full)).toThrow(message);
  });

  it('reports every problem at once', () => {
    const full = file('many.json', '{"a": {"input": -1, "output": 1}, "b": 3}');
    expect(() => configWith(full)).toThrow(/"a"\.input: .*; "b": must be an object/);
  });
});
