// The web UI reads event streams with fetch(); its parser follows the SSE format.
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../ui/src/sse-parser.js';

describe('SSE parser', () => {
  it('dispatches events split anywhere across chunks, skipping comments and keeping the last id', () => {
    const parser = new SseParser();
    const text = 'retry: 1500\n\n: keep-alive\n\nid: 1\nevent: step.started\ndata: {"a":1}\n\nid: 2\r\nevent: x\r\ndata: line1\r\ndata: line2\r\n\r\n';
    const events = [...text].flatMap((char) => parser.push(char));
    expect(events).toEqual([
      { id: '1', event: 'step.started', data: '{"a":1}' },
      { id: '2', event: 'x', data: 'line1\nline2' },
    ]);
    expect(parser.retryMs).toBe(1500);
    expect(parser.lastEventId).toBe('2');
  });

  it('names an event without `event:` "message" and waits for the blank line', () => {
    const parser = new SseParser();
    expect(parser.push('data: hi\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: null, event: 'message', data: 'hi' }]);
  });
});
