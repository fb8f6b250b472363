import assert from 'node:assert/strict';
import { openDatabase } from '../../src/db';
import { precompiled } from '../../src/db/precompiled';
import { createUser } from '../../src/users/users';
import { createTestDatabase, type TestDatabase, testDatabase } from '../helpers/db';

/** Queries compiled once per shape (src/db/precompiled.ts): each call sends its own values, and misuse fails loudly. */
describe('precompiled queries', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await testDatabase();
  });

  const usersQuery = precompiled((db, values: { id: string; plan?: 'free' | 'pro' }, variant) => {
    let query = db.selectFrom('users').select(['id', 'plan']).where('id', '=', values.id);
    if (values.plan !== undefined) query = query.where('plan', '=', values.plan);
    if (variant === 'not enterprise') query = query.where('plan', '!=', 'enterprise');
    return query;
  });

  it('sends each call its own values, per shape and variant, with the builder constants kept', async () => {
    const free = await createUser(database.db, { plan: 'free' });
    const pro = await createUser(database.db, { plan: 'pro' });
    const enterprise = await createUser(database.db, { plan: 'enterprise' });
    assert.deepEqual(await usersQuery.execute(database.db, { id: free.id }), [{ id: free.id, plan: 'free' }]);
    assert.deepEqual(await usersQuery.execute(database.db, { id: pro.id }), [{ id: pro.id, plan: 'pro' }]);
    assert.deepEqual(await usersQuery.execute(database.db, { id: pro.id, plan: 'free' }), []);
    assert.deepEqual(await usersQuery.execute(database.db, { id: pro.id, plan: 'pro' }), [{ id: pro.id, plan: 'pro' }]);
    assert.deepEqual(await usersQuery.execute(database.db, { id: free.id, plan: undefined }), [{ id: free.id, plan: 'free' }]);
    assert.deepEqual(await usersQuery.execute(database.db, { id: enterprise.id }, 'not enterprise'), []);
    assert.deepEqual(await usersQuery.execute(database.db, { id: free.id }, 'not enterprise'), [{ id: free.id, plan: 'free' }]);
  });

  it('sends each shape as one named statement of the connection, prepared once', async () => {
    const user = await createUser(database.db, { plan: 'pro' });
    const single = openDatabase(database.url, { max: 1, applicationName: 'herald-test-precompiled' });
    try {
      for (let i = 0; i < 3; i++) assert.deepEqual(await usersQuery.execute(single.db, { id: user.id }), [{ id: user.id, plan: 'pro' }]);
      assert.deepEqual(await usersQuery.execute(single.db, { id: user.id, plan: 'free' }), []);
      // The pool's one connection: its prepared statements are the two shapes, no more.
      const { rows } = await single.pool.query<{ statement: string }>(`select statement from pg_prepared_statements where name like 'herald-precompiled-%' order by prepare_time`);
      assert.equal(rows.length, 2);
      assert.match(rows[0]!.statement, /where "id" = \$1$/);
      assert.match(rows[1]!.statement, /where "id" = \$1 and "plan" = \$2$/);
    } finally {
      await single.close();
    }
  });

  it('prepares a statement again when a migration changed the columns it reads', async () => {
    const own = await createTestDatabase();
    const user = await createUser(own.db, { plan: 'free' });
    const everything = precompiled((db, values: { id: string }) => db.selectFrom('users').selectAll().where('id', '=', values.id));
    const single = openDatabase(own.url, { max: 1, applicationName: 'herald-test-precompiled' });
    try {
      const [before] = await everything.execute(single.db, { id: user.id });
      assert.equal((before as Record<string, unknown>).added_later, undefined);
      await own.pool.query(`alter table users add column added_later text not null default 'here'`);
      const [after] = await everything.execute(single.db, { id: user.id });
      assert.equal((after as Record<string, unknown>).added_later, 'here');
    } finally {
      await single.close();
    }
  });

  it('refuses a builder that spreads a value or leaves one out', async () => {
    const spread = precompiled((db, values: { ids: string[] }) => db.selectFrom('users').select('id').where('id', 'in', values.ids));
    await assert.rejects(spread.execute(database.db, { ids: ['a', 'b'] }), /syntax error/, 'compiled as `in $1`, which PostgreSQL refuses');
    const ignored = precompiled((db, _values: { id: string }) => db.selectFrom('users').select('id').where('plan', '=', 'free'));
    await assert.rejects(ignored.execute(database.db, { id: 'x' }), /each value must become exactly one parameter/);
  });
});
