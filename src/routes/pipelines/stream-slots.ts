// The event streams this process serves, counted from the request until its response closes,
// whatever the run's state: a stream of a finished run whose client reads slowly (or never)
// holds its slot as long as one that waits for a live run. Each account may hold only its share,
// so one account opening stream after stream cannot leave none for the others.
import { tooManyAccountStreams, tooManyStreams } from '../../errors.js';

export interface StreamSlots {
  /** Takes a slot for `accountId`, or throws 429 (the account's share is used) or 503 (all are); returns its release, safe to call twice. */
  take(accountId: string): () => void;
  /** Slots taken now. */
  readonly open: number;
}

export function createStreamSlots(max: number, perAccount: number): StreamSlots {
  const byAccount = new Map<string, number>();
  let open = 0;
  return {
    take(accountId) {
      const held = byAccount.get(accountId) ?? 0;
      // The account's own limit first: when it is the one holding too many, the answer says so.
      if (held >= perAccount) throw tooManyAccountStreams(perAccount);
      if (open >= max) throw tooManyStreams();
      byAccount.set(accountId, held + 1);
      open++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
        const left = (byAccount.get(accountId) ?? 1) - 1;
        if (left === 0) byAccount.delete(accountId);
        else byAccount.set(accountId, left);
      };
    },
    get open() {
      return open;
    },
  };
}
