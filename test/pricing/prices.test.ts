import { describe, expect, it } from 'vitest';
import { costOf, createPriceTable, defaultPriceTable, findModelPrice, priceOf } from '../../src/pricing/prices.js';

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

describe('price table', () => {
  it('knows common current models of every supported vendor by exact name', () => {
    for (const model of [
      'gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'o3-mini', 'claude-sonnet-4', 'claude-3-5-haiku', 'gemini-2.5-pro',
      'gemini-2.5-flash', 'mistral-large', 'llama-3.3-70b-versatile', 'deepseek-chat', 'grok-4',
    ]) {
      expect(findModelPrice(model, defaultPriceTable), model).not.toBeNull();
    }
    expect(priceOf('gpt-4o')).toEqual({ input: 2.5, output: 10, cachedInput: 1.25 });
    expect(priceOf('gpt-4o-mini')).toEqual({ input: 0.15, output: 0.6, cachedInput: 0.075 });
  });

  it('prices dated and suffixed variants as their base model, preferring the longest match', () => {
    expect(priceOf('gpt-4o-2024-08-06')).toEqual(priceOf('gpt-4o'));
    expect(priceOf('gpt-4o-mini-2024-07-18')).toEqual(priceOf('gpt-4o-mini'));
    expect(priceOf('claude-3-5-sonnet-20241022')).toEqual(priceOf('claude-3-5-sonnet'));
    expect(priceOf('claude-sonnet-4-5-20250929')).toEqual(priceOf('claude-sonnet-4-5'));
    expect(priceOf('claude-3-5-haiku-latest')).toEqual(priceOf('claude-3-5-haiku'));
    expect(priceOf('claude-3-5-sonnet@20240620')).toEqual(priceOf('claude-3-5-sonnet'));
    expect(priceOf('gemini-2.5-flash-lite-preview-06-17')).toEqual(priceOf('gemini-2.5-flash-lite'));
    expect(priceOf('mistral-large-latest')).toEqual(priceOf('mistral-large'));
    expect(priceOf('grok-4-fast-reasoning')).toEqual(priceOf('grok-4-fast'));
  });

  it('strips a leading vendor/ prefix and ignores case', () => {
    expect(priceOf('openai/gpt-4o')).toEqual(priceOf('gpt-4o'));
    expect(priceOf('models/gemini-2.5-pro')).toEqual(priceOf('gemini-2.5-pro'));
    expect(priceOf('meta-llama/llama-4-scout-17b-16e-instruct')).toEqual({ input: 0.11, output: 0.34 });
    expect(priceOf('GPT-4o')).toEqual(priceOf('gpt-4o'));
  });

  it('does not take a different model for a variant of a shorter name', () => {
    expect(findModelPrice('gpt-4.5-preview', defaultPriceTable)).toBeNull();
    expect(findModelPrice('gpt-4omni', defaultPriceTable)).toBeNull();
  });

  it('charges unknown models the configurable unknown-model price', () => {
    const table = createPriceTable({ unknownModel: { input: 1, output: 2 } });
    expect(priceOf('my-local-model', table)).toEqual({ input: 1, output: 2 });
    expect(costOf('my-local-model', usage(1_000_000, 500_000), table)).toBe(2_000_000_000);
    expect(priceOf('my-local-model')).toEqual(defaultPriceTable.unknownModel);
  });

  it('lets a table add or override models', () => {
    const table = createPriceTable({ models: { 'My-Model': { input: 3, output: 4 }, 'gpt-4o': { input: 1, output: 1 } } });
    expect(priceOf('my-model-v2', table)).toEqual({ input: 3, output: 4 });
    expect(priceOf('gpt-4o', table)).toEqual({ input: 1, output: 1 });
    expect(priceOf('gpt-4o')).toEqual({ input: 2.5, output: 10, cachedInput: 1.25 });
  });

  it('costs a call in whole nano-dollars: tokens times the per-million price', () => {
    expect(costOf('gpt-4o', usage(1000, 500))).toBe(7_500_000);
    expect(costOf('gpt-4o', usage(0, 0))).toBe(0);
  });

  it('rounds the exact cost once, half up, where floats would not be exact', () => {
    // $0.0375 per million is 37.5 nanos a token: one token is 38 nanos, two are exactly 75.
    expect(costOf('gemini-1.5-flash-8b', usage(1, 0))).toBe(38);
    expect(costOf('gemini-1.5-flash-8b', usage(2, 0))).toBe(75);
    // 0.15 and 0.6 are not exact doubles; 7 * 0.15 * 1000 is 1049.9999999999998 in floats, 1050 exactly.
    expect(costOf('gpt-4o-mini', usage(7, 0))).toBe(1050);
    // 429 prompt + 0 completion at $0.15/M: 64,350 nanos, the 6.435e-05 without its noise.
    expect(costOf('gpt-4o-mini', usage(429, 0))).toBe(64_350);
    // One token at $0.001 per million is a nano-dollar; micro-dollars would have made it 0.
    const cheap = createPriceTable({ models: { tiny: { input: 0.001, output: 0.0004 } } });
    expect(costOf('tiny', usage(1, 0), cheap)).toBe(1);
    expect(costOf('tiny', usage(0, 1), cheap)).toBe(0); // 0.4 nanos rounds down
    expect(costOf('tiny', usage(0, 2), cheap)).toBe(1); // 0.8 nanos rounds up
    expect(costOf('tiny', usage(0, 1), createPriceTable({ models: { tiny: { input: 0, output: 0.0005 } } }))).toBe(1); // 0.5 rounds up
  });

  it('stays exact beyond 2^53 units: a billion tokens at $600 per million', () => {
    expect(costOf('o1-pro', usage(0, 1_000_000_000))).toBe(600_000_000_000_000);
    expect(costOf('o1-pro', usage(1, 999_999_999))).toBe(599_999_999_550_000);
  });

  it('cached prompt tokens and reasoning tokens are charged at their own rates where the price has them', () => {
    const detailed = { ...usage(1000, 500), prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 300 } };
    // gpt-4o: 600 uncached at 2.5, 400 cached at 1.25; no reasoning rate, so all 500 at 10.
    expect(costOf('gpt-4o', detailed)).toBe((600 * 2.5 + 400 * 1.25 + 500 * 10) * 1000);
    const table = createPriceTable({ models: { m: { input: 1, output: 4, cachedInput: 0.1, reasoning: 8 } } });
    expect(costOf('m', detailed, table)).toBe(3_840_000); // 600 * 1 + 400 * 0.1 + 200 * 4 + 300 * 8 USD per million
    // Without its own rates a model charges the details as ordinary tokens; absurd details never exceed the counts.
    expect(costOf('gemini-2.5-pro', detailed)).toBe((1000 * 1.25 + 500 * 10) * 1000);
    const absurd = { ...usage(10, 10), prompt_tokens_details: { cached_tokens: 1e9 }, completion_tokens_details: { reasoning_tokens: 1e9 } };
    expect(costOf('m', absurd, table)).toBe(81_000);
  });
});
