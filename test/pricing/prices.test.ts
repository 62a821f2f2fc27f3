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
    expect(costOf('my-local-model', usage(1_000_000, 500_000), table)).toBe(2);
    expect(priceOf('my-local-model')).toEqual(defaultPriceTable.unknownModel);
  });

  it('lets a table add or override models', () => {
    const table = createPriceTable({ models: { 'My-Model': { input: 3, output: 4 }, 'gpt-4o': { input: 1, output: 1 } } });
    expect(priceOf('my-model-v2', table)).toEqual({ input: 3, output: 4 });
    expect(priceOf('gpt-4o', table)).toEqual({ input: 1, output: 1 });
    expect(priceOf('gpt-4o')).toEqual({ input: 2.5, output: 10, cachedInput: 1.25 });
  });

  it('costs a call as tokens times the per-million price', () => {
    expect(costOf('gpt-4o', usage(1000, 500))).toBeCloseTo(0.0025 + 0.005, 12);
    expect(costOf('gpt-4o', usage(0, 0))).toBe(0);
  });

  it('cached prompt tokens and reasoning tokens are charged at their own rates where the price has them', () => {
    const detailed = { ...usage(1000, 500), prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 300 } };
    // gpt-4o: 600 uncached at 2.5, 400 cached at 1.25; no reasoning rate, so all 500 at 10.
    expect(costOf('gpt-4o', detailed)).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 500 * 10) / 1e6, 15);
    const table = createPriceTable({ models: { m: { input: 1, output: 4, cachedInput: 0.1, reasoning: 8 } } });
    expect(costOf('m', detailed, table)).toBeCloseTo((600 * 1 + 400 * 0.1 + 200 * 4 + 300 * 8) / 1e6, 15);
    // Without its own rates a model charges the details as ordinary tokens; absurd details never exceed the counts.
    expect(costOf('gemini-2.5-pro', detailed)).toBeCloseTo((1000 * 1.25 + 500 * 10) / 1e6, 15);
    const absurd = { ...usage(10, 10), prompt_tokens_details: { cached_tokens: 1e9 }, completion_tokens_details: { reasoning_tokens: 1e9 } };
    expect(costOf('m', absurd, table)).toBeCloseTo((10 * 0.1 + 10 * 8) / 1e6, 15);
  });
});
