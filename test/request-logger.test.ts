// A request's logger is made on its first line (src/request-logger.ts): the same lines, no child before.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { requestLogger } from '../src/request-logger.js';
import { LogCapture } from './helpers/build.js';

function setUp() {
  const logs = new LogCapture();
  const root = pino({ level: 'info' }, logs);
  const child = vi.spyOn(root, 'child');
  const make = requestLogger as unknown as (logger: pino.Logger, bindings: object, options: object) => pino.Logger;
  return { logs, root, child, log: make(root, { request_id: 'req-1' }, {}) };
}

describe('request logger', () => {
  it('makes no child for a request that logs nothing, nor for a line at a level that is off', () => {
    const { logs, child, log } = setUp();
    log.debug({ detail: 1 }, 'not written');
    expect(child).not.toHaveBeenCalled();
    expect(logs.lines).toEqual([]);
    expect(log.level).toBe('info');
  });

  it("writes a request's lines with its id, through one child made on the first", async () => {
    const { logs, child, log } = setUp();
    log.info({ code: 'x' }, 'first');
    log.warn('second');
    log.child({ component: 'c' }).error('third');
    await new Promise((resolve) => setImmediate(resolve));
    // The request's child once, then the one asked for (pino's children share the root's child method).
    expect(child.mock.calls.map((call) => call[0])).toEqual([{ request_id: 'req-1' }, { component: 'c' }]);
    expect(logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toMatchObject([
      { level: 30, request_id: 'req-1', code: 'x', msg: 'first' },
      { level: 40, request_id: 'req-1', msg: 'second' },
      { level: 50, request_id: 'req-1', component: 'c', msg: 'third' },
    ]);
  });
});
