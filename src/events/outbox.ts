import { randomFillSync } from 'node:crypto';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db';
import { rowsOf } from '../db/named-statements';
import type { EventRow } from '../db/tables/events';
import type { EventType } from './catalogue';
import { currentRequestOrigin, type RequestOrigin } from './request-origin';

/**
 * Writing events into the outbox (migration 0090). Only inside the transaction of the change an event reports: the
 * `Transaction` parameter makes that the only way to call it.
 */

interface NewEvent {
  userId: string;
  type: EventType;
  /** The resource as the API returns it. */
  data: Record<string, unknown>;
  /** The causing request; defaults to the request being served (null outside any). */
  request?: RequestOrigin | null;
}

export async function recordEvents(trx: Transaction<Database>, events: readonly NewEvent[]): Promise<EventRow[]> {
  if (events.length === 0) return [];
  const fallback = currentRequestOrigin();
  const rows = events.map((event) => ({
    id: newEventId(),
    user_id: event.userId,
    type: event.type,
    data: JSON.stringify(event.data),
    request: JSON.stringify(event.request === undefined ? fallback : event.request),
  }));
  return trx.insertInto('events').values(rows).returningAll().execute();
}

/**
 * `recordEvents` as the last step of the statement that makes the change (a data-modifying CTE, so the statement is
 * its own transaction and the change and its events commit or vanish together): the events are built here, each
 * under the `key` of what it reports, and only those whose key `changed` selects (the rows the statement's
 * conditional write actually changed) are inserted.
 */
export function eventsInsertOf(events: ReadonlyArray<NewEvent & { key: string }>, changed: RawBuilder<unknown>): RawBuilder<unknown> {
  const fallback = currentRequestOrigin();
  const column = <T>(pick: (event: NewEvent & { key: string }) => T) => events.map(pick);
  return sql`insert into events (id, user_id, type, data, request)
    select event.id, event.user_id, event.type, event.data::jsonb, event.request::jsonb
    from ${rowsOf('event', {
      key: { values: column((e) => e.key), type: 'text' },
      id: { values: column(() => newEventId()), type: 'text' },
      user_id: { values: column((e) => e.userId), type: 'uuid' },
      type: { values: column((e) => e.type), type: 'text' },
      data: { values: column((e) => JSON.stringify(e.data)), type: 'text' },
      request: { values: column((e) => JSON.stringify(e.request === undefined ? fallback : e.request)), type: 'text' },
    })}
    where event.key in (${changed})`;
}

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = 0;
let lastRandom: number[] = [];

/**
 * `evt_` + a ULID (26 Crockford base32 characters: 48 bits of milliseconds, 80 random bits). Ids made in the same
 * millisecond by this process increase (the random part is incremented), so ids sort in creation order.
 */
export function newEventId(now = Date.now()): string {
  let random: number[];
  if (now <= lastTime && lastRandom.length === 16) {
    random = incremented(lastRandom);
    now = lastTime;
  } else {
    random = randomDigits();
  }
  lastTime = now;
  lastRandom = random;
  let time = '';
  for (let rest = now, i = 0; i < 10; i += 1, rest = Math.floor(rest / 32)) time = crockford[rest % 32] + time;
  return `evt_${time}${random.map((digit) => crockford[digit]).join('')}`;
}

// Random bytes drawn 4 KiB at a time (as `randomUUID` does): a `randomBytes(16)` per event was a buffer and a call into
// OpenSSL each time.
const randomPool = Buffer.alloc(4096);
let randomPoolUsed = randomPool.length;

/** 16 random base32 digits. */
function randomDigits(): number[] {
  if (randomPoolUsed === randomPool.length) {
    randomFillSync(randomPool);
    randomPoolUsed = 0;
  }
  const digits: number[] = [];
  for (let i = 0; i < 16; i += 1) digits.push(randomPool[randomPoolUsed + i]! & 31);
  randomPoolUsed += 16;
  return digits;
}

function incremented(digits: readonly number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i -= 1) {
    if (next[i] < 31) {
      next[i] += 1;
      return next;
    }
    next[i] = 0;
  }
  return next;
}
