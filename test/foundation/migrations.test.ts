import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { migrateDown, migrateToLatest } from '../../src/db/migrate';
import { migrations } from '../../migrations';
import { createTestDatabase } from '../helpers/db';

describe('migrations', () => {
  it('apply in order, revert one by one down to nothing, and apply again', async () => {
    const database = await createTestDatabase({ migrate: false });
    const names = Object.keys(migrations);
    assert.deepEqual(names, [...names].sort(), 'listed in name order');
    assert.ok(names.every((name) => /^\d{4}_[a-z0-9_]+$/.test(name)), 'named NNNN_name');
    assert.deepEqual(await migrateToLatest(database.db), names);
    for (const name of [...names].reverse()) {
      assert.deepEqual(await migrateDown(database.db), [name]);
    }
    const tables = await sql<{ tablename: string }>`select tablename from pg_tables where schemaname = 'public' and tablename not like 'kysely_%'`.execute(database.db);
    assert.deepEqual(tables.rows, []);
    assert.deepEqual(await migrateToLatest(database.db), names);
  });
});
