import type pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db';

/**
 * The test database through a pool of its own whose next read of one row set can be held back, to race a workflow's
 * read (test/posts/ and test/threads/ scheduled-held-reschedule): `isRead` names the statement by its text, and the
 * read held is the next one whose first parameter is the key given to `holdNextRead`. The statement runs at once (its
 * answer is the rows as they were then) and its answer is delivered when the test releases it.
 */
export function gatedDatabase(url: string, options: { applicationName: string; isRead: (text: string | undefined) => boolean }) {
  const handle: DatabaseHandle = openDatabase(url, { max: 10, applicationName: options.applicationName });
  let gate: { key: string; reached: () => void; released: Promise<void> } | undefined;
  handle.pool.on('connect', (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const config = args[0] as { text?: string; values?: unknown[] } | string;
      const text = typeof config === 'string' ? config : config.text;
      const values = typeof config === 'string' ? (args[1] as unknown[] | undefined) : config.values;
      const held = gate && options.isRead(text) && values?.[0] === gate.key ? gate : undefined;
      if (!held) return query(...args);
      gate = undefined;
      held.reached();
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (...answer: unknown[]) => void held.released.then(() => (callback as (...a: unknown[]) => void)(...answer));
        return query(...args);
      }
      return (query(...args) as Promise<unknown>).then((answer) => held.released.then(() => answer));
    };
  });
  return {
    handle,
    /** Holds back the answer of the next read keyed by `key` until `release()`; `sent` resolves when it was sent. */
    holdNextRead(key: string) {
      let reached!: () => void;
      let release!: () => void;
      const sent = new Promise<void>((done) => (reached = done));
      const released = new Promise<void>((done) => (release = done));
      gate = { key, reached, released };
      return { sent, release };
    },
  };
}
