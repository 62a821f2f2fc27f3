import { describe, expect, it } from 'vitest';
import { storableJson, storableText, wellFormedJson } from '../src/unicode.js';

describe('storableJson and wellFormedJson', () => {
  it('replace NUL (storable only) and lone surrogates in every string, keys and nested values included', () => {
    const value = { 'k\u0000': ['a\ud800b', { deep: 'x\udc00', fine: 'é😀' }], n: 1, t: true, z: null };
    expect(storableJson(value)).toEqual({ 'k\ufffd': ['a\ufffdb', { deep: 'x\ufffd', fine: 'é😀' }], n: 1, t: true, z: null });
    expect(wellFormedJson(value)).toEqual({ 'k\u0000': ['a\ufffdb', { deep: 'x\ufffd', fine: 'é😀' }], n: 1, t: true, z: null });
    expect(storableText('a\u0000\ud83d')).toBe('a\ufffd\ufffd');
  });

  it('copy only what holds a changed string, and leave the value given unchanged', () => {
    const clean = { a: [1, 'two', { three: 'é😀' }], b: { c: 'd' } };
    expect(storableJson(clean)).toBe(clean);
    const mixed = { kept: { x: 'fine' }, changed: ['ok', 'bad\u0000'] };
    const out = storableJson(mixed);
    expect(out).not.toBe(mixed);
    expect(out.kept).toBe(mixed.kept);
    expect(out.changed).toEqual(['ok', 'bad\ufffd']);
    expect(mixed.changed[1]).toBe('bad\u0000');
  });

  it('keep a `__proto__` key from parsed JSON as the object’s own data', () => {
    const parsed = JSON.parse('{"__proto__": {"p": "v\\u0000"}, "a": 1}') as Record<string, unknown>;
    const out = storableJson(parsed);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(out)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"p":"v\ufffd"},"a":1}');
  });
});
