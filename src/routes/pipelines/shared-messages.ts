// The terminal message of a finished run is the same for every client, and can be megabytes (its
// data is the instance, answer included). Streams of one run share one copy of its bytes while
// they send it, instead of each holding its own for as long as its client takes to read it.
export interface SharedMessages {
  /**
   * The bytes under `key`, made by `make` unless another stream holds them already (null: `make`
   * found nothing to send). Call `release` once they are written or no longer wanted.
   */
  use(key: string, make: () => Promise<Buffer | null>): Promise<{ bytes: Buffer | null; release: () => void }>;
  /** Messages held now (for tests). */
  readonly size: number;
}

export function createSharedMessages(): SharedMessages {
  const held = new Map<string, { bytes: Promise<Buffer | null>; users: number }>();
  return {
    async use(key, make) {
      let entry = held.get(key);
      if (!entry) {
        const made = { bytes: make(), users: 0 };
        // A failed make is not kept: the next stream tries again.
        made.bytes.catch(() => held.get(key) === made && held.delete(key));
        held.set(key, made);
        entry = made;
      }
      const current = entry;
      current.users++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (--current.users === 0 && held.get(key) === current) held.delete(key);
      };
      try {
        return { bytes: await current.bytes, release };
      } catch (error) {
        release();
        throw error;
      }
    },
    get size() {
      return held.size;
    },
  };
}
