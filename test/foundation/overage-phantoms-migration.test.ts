import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as m0273 from '../../migrations/0273_overage_phantoms_repaired';
import { createUser } from '../../src/users/users';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/** A charge as `quota_reservations` holds it: reserved at `at`, refunded (or spent) at `settled`. */
interface Seeded {
  kind?: 'post' | 'first_comment' | 'scheduled' | 'x_link';
  flagged: boolean;
  at: string;
  state?: 'reserved' | 'spent' | 'refunded';
  settled?: string;
}

describe('migration 0273_overage_phantoms_repaired', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let month: string;
  let lastMonth: string;

  before(async () => {
    database = await createTestDatabase();
    const { rows } = await database.pool.query<{ month: string; last: string }>(
      `select to_char(now() at time zone 'utc', 'YYYY-MM') as month, to_char((now() at time zone 'utc') - interval '1 month', 'YYYY-MM') as last`,
    );
    [month, lastMonth] = [rows[0].month, rows[0].last];
  });

  /** A user whose month holds `charges` and a stored `overage` counter (as the rule before 2026-12-07 left it). */
  async function seed(overage: number, charges: Seeded[], inMonth = month): Promise<string> {
    const user = await createUser(database.db, { plan: 'agent' });
    for (const c of charges) {
      await database.pool.query(
        `insert into quota_reservations (user_id, post_id, month, kind, state, overage, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [user.id, randomUUID(), inMonth, c.kind ?? 'post', c.state ?? 'spent', c.flagged, c.at, c.settled ?? c.at],
      );
    }
    const posts = charges.filter((c) => (c.kind ?? 'post') === 'post' || c.kind === 'first_comment').filter((c) => c.state !== 'refunded').length;
    await database.pool.query(`insert into usage_months (user_id, month, posts, overage) values ($1, $2, $3, $4)`, [user.id, inMonth, posts, overage]);
    return user.id;
  }

  async function overageOf(userId: string, inMonth = month): Promise<number> {
    const { rows } = await database.pool.query<{ overage: number }>(`select overage from usage_months where user_id = $1 and month = $2`, [userId, inMonth]);
    return rows[0].overage;
  }

  const t = (minute: number) => `2026-12-01T09:${String(minute).padStart(2, '0')}:00Z`;

  it("recomputes the current month's overage from its charges: phantoms go, real overage and the floor at 0 stay, past months untouched; a second run changes nothing", async () => {
    const cases = {
      // README "Plans and quotas": a scheduled post within the quota, a post past it, then the scheduled one refunded.
      phantom: { stored: 1, expected: 1 - 1, charges: [{ flagged: false, at: t(1), state: 'refunded', settled: t(3) }, { flagged: true, at: t(2) }] },
      // Two refunds of charges within the quota under three posts past it: two phantoms, one post past the quota.
      twoPhantoms: {
        stored: 3,
        expected: 1,
        charges: [
          { flagged: false, at: t(1), state: 'refunded', settled: t(5) }, { flagged: false, at: t(1), state: 'refunded', settled: t(5) },
          { flagged: true, at: t(2) }, { flagged: true, at: t(3) }, { flagged: true, at: t(4), state: 'reserved' },
        ],
      },
      // A refund while the month was past nothing took nothing off (floor at 0); the charge past the quota came later.
      refundAtZero: { stored: 1, expected: 1, charges: [{ flagged: false, at: t(1), state: 'refunded', settled: t(2) }, { flagged: true, at: t(3) }] },
      // A charge past the quota refunded: the old rule already took it off. Other kinds never count.
      flaggedRefund: {
        stored: 0,
        expected: 0,
        charges: [{ flagged: true, at: t(1), state: 'refunded', settled: t(2) }, { kind: 'x_link', flagged: false, at: t(1), state: 'refunded', settled: t(2) }, { kind: 'scheduled', flagged: false, at: t(1), state: 'refunded', settled: t(2) }],
      },
      // First comments are post charges.
      firstComment: { stored: 1, expected: 0, charges: [{ kind: 'first_comment', flagged: false, at: t(1), state: 'refunded', settled: t(3) }, { flagged: true, at: t(2) }] },
      // A counter below its charges' replay is never raised.
      below: { stored: 0, expected: 0, charges: [{ flagged: true, at: t(1) }] },
      // No charges at all, counter 0: nothing to do.
      empty: { stored: 0, expected: 0, charges: [] },
    } satisfies Record<string, { stored: number; expected: number; charges: Seeded[] }>;
    const users = Object.fromEntries(await Promise.all(Object.entries(cases).map(async ([name, c]) => [name, await seed(c.stored, c.charges)] as const)));
    const past = await seed(1, cases.phantom.charges, lastMonth);

    await m0273.up(database.db);
    const after = async () => Object.fromEntries(await Promise.all(Object.keys(cases).map(async (name) => [name, await overageOf(users[name])] as const)));
    const expected = Object.fromEntries(Object.entries(cases).map(([name, c]) => [name, c.expected]));
    assert.deepEqual(await after(), expected);
    assert.equal(await overageOf(past, lastMonth), 1, "a past month's counter is left as it was billed");

    await m0273.up(database.db);
    assert.deepEqual(await after(), expected, 'idempotent');
  });

  it('on a live database a reservation committed while it runs keeps its step: the phantom is taken off the row as locked, not overwritten', async () => {
    const userId = await seed(1, [{ flagged: false, at: t(1), state: 'refunded', settled: t(3) }, { flagged: true, at: t(2) }]);
    const create = await database.pool.connect();
    try {
      // A create past the quota, in flight: its reservation and the counter's +1, the month's row locked until commit.
      await create.query('begin');
      await create.query(`insert into quota_reservations (user_id, post_id, month, kind, state, overage) values ($1, $2, $3, 'post', 'reserved', true)`, [userId, randomUUID(), month]);
      await create.query(`update usage_months set posts = posts + 1, overage = overage + 1 where user_id = $1 and month = $2`, [userId, month]);
      const migrating = m0273.up(database.db);
      // The migration waits on the month's row (its snapshot did not see the create).
      for (let i = 0; ; i++) {
        const { rows } = await database.pool.query(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%update usage_months as u%'`);
        if (rows.length > 0) break;
        assert.ok(i < 200, 'the migration never waited on the row');
        await new Promise((r) => setTimeout(r, 25));
      }
      await create.query('commit');
      await migrating;
    } finally {
      create.release();
    }
    assert.equal(await overageOf(userId), 1, 'the phantom taken off, the new post past the quota kept');
    await m0273.up(database.db);
    assert.equal(await overageOf(userId), 1);
  });
});
