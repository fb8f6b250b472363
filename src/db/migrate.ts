import type { Kysely } from 'kysely';
import { type MigrationResultSet, Migrator } from 'kysely/migration';
import { migrations } from '../../migrations';

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly results: MigrationResultSet['results'],
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** Applies every pending migration (Kysely holds a Postgres lock, so concurrent starts apply each once). */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return settle(await migrator(db).migrateToLatest());
}

/** What is applied and what is not, by name. */
export async function migrationState(db: Kysely<any>): Promise<{ applied: number; pending: string[] }> {
  const all = await migrator(db).getMigrations();
  const pending = all.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
  return { applied: all.length - pending.length, pending };
}

/** Reverts the last applied migration. */
export async function migrateDown(db: Kysely<any>): Promise<string[]> {
  return settle(await migrator(db).migrateDown());
}

function settle({ error, results }: MigrationResultSet): string[] {
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new MigrationError(
      failed ? `Migration ${failed.migrationName} failed: ${reason}` : `Migrations failed: ${reason}`,
      results,
    );
  }
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
