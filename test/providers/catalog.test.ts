import { describe, expect, it } from 'vitest';
import { adapters } from '../../src/providers/adapters/index.js';
import { candidatesFor, explicitSelection, providerCatalog } from '../../src/providers/catalog.js';
import { connection } from './helpers.js';

describe('provider catalog', () => {
  it('lists every required provider, with endpoint support only for azure-openai and custom', () => {
    expect(providerCatalog.map((e) => e.id)).toEqual([
      'openai', 'anthropic', 'google', 'mistral', 'groq', 'deepseek', 'xai', 'together', 'fireworks',
      'openrouter', 'cerebras', 'perplexity', 'azure-openai', 'custom',
    ]);
    expect(providerCatalog.filter((e) => e.supportsEndpoint).map((e) => e.id)).toEqual(['azure-openai', 'custom']);
    for (const entry of providerCatalog) {
      expect(entry.credentialKind).toBe('api_key');
      expect(adapters[entry.id], entry.id).toBeDefined();
    }
    expect(Object.keys(adapters).sort()).toEqual(providerCatalog.map((e) => e.id).sort());
  });

  it.each([
    ['gpt-4o', 'openai'], ['o3-mini', 'openai'], ['chatgpt-4o-latest', 'openai'],
    ['claude-3-5-haiku-latest', 'anthropic'], ['gemini-2.0-flash', 'google'], ['mistral-large-latest', 'mistral'],
    ['llama-3.3-70b-versatile', 'groq'], ['deepseek-chat', 'deepseek'], ['grok-2', 'xai'],
    ['meta-llama/Llama-3.3-70B-Instruct-Turbo', 'together'], ['accounts/fireworks/models/llama-v3p1-8b-instruct', 'fireworks'],
    ['sonar-pro', 'perplexity'],
  ])('model %s is served by %s among the pattern providers', (model, provider) => {
    const all = providerCatalog.filter((e) => e.models.kind !== 'any').map((e) => connection(e.id, 'k'));
    expect(candidatesFor(model, all).map((c) => c.connection.provider)).toContain(provider);
  });

  it('does not offer a model to a provider whose pattern does not match', () => {
    const conns = [connection('openai', 'k'), connection('anthropic', 'k')];
    expect(candidatesFor('claude-3-opus', conns).map((c) => c.connection.provider)).toEqual(['anthropic']);
    expect(candidatesFor('gemini-pro', conns)).toEqual([]);
  });

  it('offers any model to openrouter, azure-openai and custom', () => {
    const conns = [connection('openrouter', 'k'), connection('azure-openai', 'k'), connection('custom', 'k')];
    expect(candidatesFor('my-deployment', conns)).toHaveLength(3);
  });
});

describe('explicit provider selection', () => {
  it('a <provider>/ prefix selects that provider alone and strips the prefix', () => {
    const conns = [connection('openrouter', 'k', { priority: 0 }), connection('anthropic', 'k', { priority: 5 })];
    const picked = candidatesFor('anthropic/claude-3-5-haiku-latest', conns);
    expect(picked.map((c) => [c.connection.provider, c.vendorModel])).toEqual([['anthropic', 'claude-3-5-haiku-latest']]);
  });

  it('keeps the rest of the path for aggregators', () => {
    const conns = [connection('openrouter', 'k')];
    expect(candidatesFor('openrouter/meta-llama/llama-3-70b', conns)[0]!.vendorModel).toBe('meta-llama/llama-3-70b');
  });

  it('a prefix that is not a catalog id is part of the model name', () => {
    expect(explicitSelection('meta-llama/llama-3-70b')).toBeNull();
    expect(explicitSelection('openai/')).toBeNull();
    expect(candidatesFor('meta-llama/llama-3-70b', [connection('together', 'k')])[0]!.vendorModel).toBe('meta-llama/llama-3-70b');
  });

  it('an explicit prefix without a matching connection yields no candidate', () => {
    expect(candidatesFor('anthropic/claude-3-opus', [connection('openai', 'k')])).toEqual([]);
  });
});

describe('candidate order', () => {
  it('is priority ascending, then older connection, then provider id, then connection id', () => {
    const t = new Date('2024-01-01T00:00:00Z');
    const later = new Date('2024-06-01T00:00:00Z');
    const conns = [
      connection('openrouter', 'k', { priority: 10, createdAt: t }),
      connection('custom', 'k', { priority: 1, createdAt: later }),
      connection('azure-openai', 'k', { priority: 1, createdAt: later, id: 'b' }),
      connection('openai', 'k', { priority: 1, createdAt: t }),
    ];
    expect(candidatesFor('gpt-4o', conns).map((c) => c.connection.provider)).toEqual(['openai', 'azure-openai', 'custom', 'openrouter']);
  });
});
