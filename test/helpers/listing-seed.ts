/**
 * Bulk posts for listing tests and benchmarks, in one statement each (20,000 rows in well under a second).
 *
 *   seedPublishedThenDrafts(pool, userId, { published, drafts }): Promise<void>
 *     `published` x posts two days old, texts `published 1..N` (N the newest), then `drafts` drafts a day old and
 *     newer than all of them, texts `draft 1..M` (M the newest). No account; then `analyze posts`.
 */
import type pg from 'pg';

export async function seedPublishedThenDrafts(pool: pg.Pool, userId: string, counts: { published: number; drafts: number }): Promise<void> {
  const rows = (status: 'published' | 'draft', age: string, count: number) =>
    pool.query(
      `insert into posts (user_id, platform, text, status, published_at, created_at)
       select $1, 'x', $2 || ' ' || i, $2, case when $2 = 'published' then now() - $3::interval end, now() - $3::interval + i * interval '1 second'
       from generate_series(1, $4::int) i`,
      [userId, status, age, count],
    );
  await rows('published', '2 days', counts.published);
  await rows('draft', '1 day', counts.drafts);
  await pool.query('analyze posts');
}
