import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { PlatformSlug } from '../platforms/types';

/**
 * The mass-loss guard (README "Credentials", 2026-12-07). A platform that refuses a renewal "for good" (`invalid_grant`,
 * `invalid_request`) for many accounts at once is more likely down, or refusing Herald's app (a client it no longer
 * takes under a code Herald reads as the user's, an app suspended), than facing many users who revoked together;
 * losing every connection then cancels every scheduled post and asks every user to reconnect, for nothing.
 *
 * So each refusal is recorded (`credential_refusals`, the database's clock, removed when the account renews again),
 * and a refusal is held back, not marked, while its platform's refusals in the last hour are at least
 * `MIN_REFUSALS` and at least as many as its renewals in that hour: the account keeps its credential and the renewal
 * is retried like Herald's own configuration fault (logged as an error). When the platform recovers, the held
 * accounts renew, the renewals outnumber what is still refused, and those refusals (users who did revoke) are marked.
 * Only where the platform's refusals do not come together for good reasons (`guardsMassRefusal` in
 * `src/platforms/renewal/lifetimes.ts`: x, threads, instagram), and never for a refusal naming the account's own end
 * (the renewer's `isAccountsOwnRefusal`: Graph's subcodes), which is neither recorded nor held.
 */
const WINDOW = sql`interval '1 hour'`;
const MIN_REFUSALS = 5;

export interface MassRefusal {
  refused: number;
  renewed: number;
}

/**
 * Records the account's refusal and answers whether its platform is refusing in mass (then the refusal is held back).
 * Under the renewal's transaction, after the account row is locked.
 */
export async function recordRefusal(trx: Transaction<Database>, accountId: string, platform: PlatformSlug): Promise<MassRefusal | null> {
  const recorded = await trx
    .insertInto('credential_refusals')
    .values({ account_id: accountId, platform })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ platform, refused_at: sql`now()` }))
    .returning('released_at')
    .executeTakeFirstOrThrow();
  // An operator released this account's hold (`releaseHeldRefusals`): its refusal is taken as the user's.
  if (recorded.released_at !== null) return null;
  const counts = await sql<{ refused: string; renewed: string }>`
    select
      (select count(*) from credential_refusals where platform = ${platform} and refused_at > now() - ${WINDOW} and released_at is null) as refused,
      (select count(*) from accounts where platform = ${platform} and credential_issued_at > now() - ${WINDOW}) as renewed`.execute(trx);
  const refused = Number(counts.rows[0]!.refused);
  const renewed = Number(counts.rows[0]!.renewed);
  return refused >= MIN_REFUSALS && refused >= renewed ? { refused, renewed } : null;
}

/** The account renewed: a refusal recorded for it (held back, or before a reconnect) no longer counts. */
export async function clearRefusal(trx: Transaction<Database>, accountId: string): Promise<void> {
  await trx.deleteFrom('credential_refusals').where('account_id', '=', accountId).execute();
}

/**
 * `herald credentials release`: an operator judged the held refusals of a platform (or of one account) real, e.g.
 * users who did revoke together. Each account still connected whose refusal is held is released: its next refusal
 * (the credential workflow retries within its backoff, at most 10 minutes; or its next publish) loses the connection
 * and cancels its scheduled posts like any single refusal, in the one place that does (`credential-renewal.ts`), and
 * its refusal no longer counts towards holding others. One that renews meanwhile is simply kept (the row is deleted).
 */
export async function releaseHeldRefusals(db: Db, platform: PlatformSlug, accountId?: string): Promise<Array<{ account_id: string; refused_at: Date }>> {
  return db
    .updateTable('credential_refusals as r')
    .from('accounts as a')
    .set({ released_at: sql`now()` })
    .whereRef('a.id', '=', 'r.account_id')
    .where('r.platform', '=', platform)
    .where('r.released_at', 'is', null)
    .where('a.inactive_reason', 'is distinct from', 'connection_lost')
    .$if(accountId !== undefined, (qb) => qb.where('r.account_id', '=', accountId!))
    .returning(['r.account_id', 'r.refused_at'])
    .execute();
}
