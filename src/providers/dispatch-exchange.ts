// What every handler we hand to undici's `dispatch` shares: the abort handshake. undici gives
// a handler its abort function only once the request has a socket (onConnect), so a call
// stopped before then (the caller left, a timer fired) must be remembered and replayed there.
import type { Dispatcher } from 'undici';

export abstract class DispatchExchange implements Dispatcher.DispatchHandler {
  private abortRequest: ((reason: Error) => void) | null = null;
  private abortReason: Error | null = null;

  /** Stops the exchange and releases its socket: at once when undici has connected it, else as soon as it does. */
  protected stopExchange(reason: Error): void {
    if (this.abortRequest) this.abortRequest(reason);
    else this.abortReason ??= reason;
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.abortReason) abort(this.abortReason);
    else this.abortRequest = abort;
  }
}
