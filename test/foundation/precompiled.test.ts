import assert from 'node:assert/strict';
import { precompiled } from '../../src/db/precompiled';
import { createUser } from '../../src/users/users';
import { type TestDatabase, testDatabase } from '../helpers/db';

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

  it('refuses a builder that spreads a value or leaves one out', async () => {
    const spread = precompiled((db, values: { ids: string[] }) => db.selectFrom('users').select('id').where('id', 'in', values.ids));
    await assert.rejects(spread.execute(database.db, { ids: ['a', 'b'] }), /syntax error/, 'compiled as `in $1`, which PostgreSQL refuses');
    const ignored = precompiled((db, _values: { id: string }) => db.selectFrom('users').select('id').where('plan', '=', 'free'));
    await assert.rejects(ignored.execute(database.db, { id: 'x' }), /each value must become exactly one parameter/);
  });
});
