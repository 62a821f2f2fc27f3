import { describe, expect, it } from 'vitest';
import { SseDecoder, SseDecoderError } from '../../../src/providers/stream/sse-decoder.js';

const bytes = (text: string) => new TextEncoder().encode(text);

/** Feeds the text cut at every given offset, and returns every event. */
function decode(text: string, cuts: number[] = [], max = 1000) {
  const decoder = new SseDecoder(max);
  const all = bytes(text);
  const out = [];
  let from = 0;
  for (const cut of [...cuts, all.length]) {
    out.push(...decoder.push(all.slice(from, cut)));
    from = cut;
  }
  out.push(...decoder.end());
  return out;
}

describe('SseDecoder', () => {
  it('reads data and event fields, joins multi-line data, skips comments, ids and retry', () => {
    expect(decode(': keep-alive\n\nevent: ping\ndata: {"a":1}\n\nid: 7\nretry: 10\ndata: line one\ndata:line two\n\n')).toEqual([
      { event: 'ping', data: '{"a":1}' },
      { event: '', data: 'line one\nline two' },
    ]);
  });

  it('takes \\n, \\r\\n and \\r line ends, also when a chunk ends between \\r and \\n', () => {
    const text = 'data: a\r\n\r\ndata: b\r\rdata: c\n\n';
    const expected = [{ event: '', data: 'a' }, { event: '', data: 'b' }, { event: '', data: 'c' }];
    expect(decode(text)).toEqual(expected);
    for (let cut = 1; cut < text.length; cut++) expect(decode(text, [cut])).toEqual(expected);
  });

  it('takes line ends mixed within one read, in any order', () => {
    const text = 'data: a\n\ndata: b\r\n\r\ndata: c\n\ndata: d\r\rdata: e\n\n';
    const expected = ['a', 'b', 'c', 'd', 'e'].map((data) => ({ event: '', data }));
    expect(decode(text)).toEqual(expected);
    for (let cut = 1; cut < text.length; cut++) expect(decode(text, [cut])).toEqual(expected);
  });

  it('keeps a multi-byte character cut between two chunks whole', () => {
    const text = 'data: héllo 🌍\n\n';
    const size = bytes(text).length;
    for (let cut = 1; cut < size; cut++) expect(decode(text, [cut])).toEqual([{ event: '', data: 'héllo 🌍' }]);
  });

  it('a last event without its blank line still counts at the end', () => {
    expect(decode('data: [DONE]')).toEqual([{ event: '', data: '[DONE]' }]);
  });

  it('an event past the size limit is an error, however it is cut', () => {
    expect(() => decode(`data: ${'x'.repeat(50)}\n\n`, [], 20)).toThrow(SseDecoderError);
    expect(() => decode(`data: ${'x'.repeat(50)}`, [10, 20, 30, 40], 20)).toThrow(SseDecoderError);
    expect(() => decode(`data: ${'x'.repeat(10)}\ndata: ${'x'.repeat(10)}\ndata: ${'x'.repeat(10)}\n\n`, [], 25)).toThrow(SseDecoderError);
  });
});
