import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { migrations } from '../../migrations';
import * as m0030 from '../../migrations/0030_media';
import type { MediaTables } from '../../src/db/tables/media';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * A fresh database of the shared test cluster with every migration applied, including 0030_media until the
 * migration index lists it (then the extra entry is simply already applied).
 */
export async function mediaTestDatabase(): Promise<TestDatabase & { media: Kysely<MediaTables> }> {
  const database = await createTestDatabase();
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => ({ ...migrations, '0030_media': m0030 }) } });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
  return { ...database, media: database.db as unknown as Kysely<MediaTables> };
}

export async function insertUser(db: TestDatabase['db']): Promise<string> {
  const { rows } = await sql<{ id: string }>`insert into users (plan) values ('free') returning id`.execute(db);
  return rows[0].id;
}
