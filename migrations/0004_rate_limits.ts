import { type Kysely, sql } from 'kysely';

/**
 * The table `rate-limiter-flexible`'s RateLimiterPostgres works on (its own layout: key, points, expire in epoch ms).
 * Created here rather than by the library at runtime so that every process finds it and the schema is versioned.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'varchar(255)', (col) => col.primaryKey())
    .addColumn('points', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('expire', 'bigint')
    .execute();
  await sql`create index rate_limits_expire on rate_limits (expire)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limits').execute();
}
