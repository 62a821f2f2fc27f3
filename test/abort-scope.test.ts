// A caller that may leave: the CallerGone handle does what an AbortController's signal does for
// the code that cancels on it (whenAborted, forget, abortScope), and gives a real signal on demand.
import { describe, expect, it } from 'vitest';
import { abortScope, CallerGone, forget, realSignal, whenAborted } from '../src/abort-scope.js';

describe('CallerGone', () => {
  it('calls each registered callback once with the reason, and not those forgotten', () => {
    const gone = new CallerGone();
    const called: unknown[] = [];
    const kept = (reason: unknown) => void called.push(['kept', reason]);
    const dropped = (reason: unknown) => void called.push(['dropped', reason]);
    whenAborted(gone, kept);
    whenAborted(gone, dropped);
    forget(gone, dropped);
    gone.abort('left');
    gone.abort('again');
    expect(called).toEqual([['kept', 'left']]);
    expect(gone.aborted).toBe(true);
    expect(gone.reason).toBe('left');
  });

  it('aborts with an AbortError, as AbortController.abort() does, when given no reason', () => {
    const gone = new CallerGone();
    gone.abort();
    expect(gone.reason).toBeInstanceOf(DOMException);
    expect((gone.reason as DOMException).name).toBe('AbortError');
  });

  it('makes a real signal only when asked, aborted with it before or after', () => {
    const before = new CallerGone();
    const early = before.signal;
    expect(early.aborted).toBe(false);
    before.abort('bye');
    expect(early.aborted).toBe(true);
    expect(early.reason).toBe('bye');

    const after = new CallerGone();
    after.abort('gone already');
    expect(realSignal(after).aborted).toBe(true);
    expect(realSignal(after).reason).toBe('gone already');
    const plain = new AbortController().signal;
    expect(realSignal(plain)).toBe(plain);
  });

  it('is a parent for an abort scope, which stops with it and unlinks on dispose', () => {
    const gone = new CallerGone();
    const scope = abortScope(gone);
    const disposed = abortScope(gone);
    disposed.dispose();
    gone.abort('caller left');
    expect(scope.signal.aborted).toBe(true);
    expect(scope.signal.reason).toBe('caller left');
    expect(disposed.signal.aborted).toBe(false);
    expect(abortScope(gone).signal.reason).toBe('caller left');
  });
});
