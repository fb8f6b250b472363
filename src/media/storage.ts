import { sql, type Kysely } from 'kysely';
import type { MediaTables } from '../db/tables/media';
import { planLabel, plans, type PlanName } from '../plans';
import { mediaStorageFull } from './errors';

/**
 * The plan's media storage (README "Media"): the uploads a user keeps (`POST /api/v1/media`) may take at most
 * `mediaStorageBytes` of the plan. Downloaded copies of a post's media URLs do not count: they go when the post
 * publishes or is cancelled, and the scheduled-post quota bounds them.
 */

export interface MediaStorage {
  usedBytes: number;
  /** Infinity when the plan has no bound. */
  limitBytes: number;
}

export async function storageOf(db: Kysely<MediaTables>, userId: string, plan: PlanName): Promise<MediaStorage> {
  const row = await db
    .selectFrom('media')
    .select(sql<string>`coalesce(sum(size), 0)`.as('used'))
    .where('user_id', '=', userId)
    .where('origin', '=', 'upload')
    .executeTakeFirstOrThrow();
  return { usedBytes: Number(row.used), limitBytes: plans[plan].mediaStorageBytes };
}

/** Before a file arrives: refuses at once when the uploads kept already fill the plan's storage (read only when bounded). */
export async function requireStorageLeft(readStorage: () => Promise<MediaStorage>, plan: PlanName): Promise<void> {
  if (plans[plan].mediaStorageBytes === Infinity) return;
  const storage = await readStorage();
  if (storage.usedBytes >= storage.limitBytes) throw mediaStorageFull({ ...storage, planLabel: planLabel(plan) }, null);
}

/**
 * Inside the transaction that has just written an upload of `size` bytes, before it commits: refuses (and so rolls
 * back) an upload that takes the user's kept uploads over the plan's storage. The lock makes the user's uploads
 * commit one at a time past this point, so two arriving together cannot both fit in the room for one; it is taken
 * after the bytes are written, so it is held only for the sum and the commit.
 */
export async function requireRoomFor(trx: Kysely<MediaTables>, userId: string, plan: PlanName, size: number): Promise<void> {
  if (plans[plan].mediaStorageBytes === Infinity) return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${`herald.media-storage.${userId}`}, 0))`.execute(trx);
  const storage = await storageOf(trx, userId, plan);
  if (storage.usedBytes > storage.limitBytes) {
    throw mediaStorageFull({ ...storage, usedBytes: storage.usedBytes - size, planLabel: planLabel(plan) }, size);
  }
}
