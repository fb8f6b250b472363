import { sql, type QueryCreator, type RawBuilder, type Transaction } from 'kysely';
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

/**
 * A platform call refused as with a dead credential where nothing could renew it (x OAuth 1.0a, x without a refresh
 * token or app credentials, telegram, mastodon, facebook, ...; `credential-keeping-adapters.ts`). A platform answering
 * 401 to every call for a few minutes (an outage, a refusal of Herald's app) would otherwise lose every account that
 * published meanwhile at its first refusal and cancel all their scheduled posts. So a refusal loses the connection
 * only when the account was refused already at least `CONFIRM_AFTER` (10 minutes) before, and not while the platform's
 * refusals in the last hour are at least `MIN_REFUSALS` (a mass event; no count of healthy calls is kept, as that
 * would cost every publish a write), unless the account has been refused for `CONFIRM_IN_MASS_AFTER` (6 hours), or an
 * operator released it (`herald credentials release`). A revoked token thus ends `connection_lost` at its first
 * refusal 10 minutes after the first (a scheduled post's third retry, 21 minutes after its time, is one). A call that
 * succeeds meanwhile ends the run (`endCallRefusal`), as do a renewal and a reconnect (`clearRefusal`): a later 401
 * starts a new one. A refusal naming the account's own end is never recorded (`CredentialRefusalRule`).
 */
const CONFIRM_AFTER = sql`interval '10 minutes'`;
const CONFIRM_IN_MASS_AFTER = sql`interval '6 hours'`;

export interface MassRefusal {
  refused: number;
  renewed: number;
  /** This refusal began the account's hold (logged as an error once; its retries are logged at debug level). */
  first: boolean;
}

/**
 * The guard's count, the one place its text lives: the platform's refusals in the last hour not released by an
 * operator (index `credential_refusals_platform_idx`), and its accounts renewed in that hour (`accounts_renewed_idx`,
 * migration 0278; the test of that plan explains this very query).
 */
export function massRefusalCounts(platform: PlatformSlug): RawBuilder<{ refused: string; renewed: string }> {
  return sql<{ refused: string; renewed: string }>`
    select
      (select count(*) from credential_refusals where platform = ${platform} and refused_at > now() - ${WINDOW} and released_at is null) as refused,
      (select count(*) from accounts where platform = ${platform} and credential_issued_at > now() - ${WINDOW}) as renewed`;
}

async function countRefusals(db: Db | Transaction<Database>, platform: PlatformSlug): Promise<{ refused: number; renewed: number }> {
  const counts = await massRefusalCounts(platform).execute(db);
  return { refused: Number(counts.rows[0]!.refused), renewed: Number(counts.rows[0]!.renewed) };
}

/**
 * Records the account's refusal, as the start of a new run when its last one is over an hour old (the platform
 * answering again meanwhile without a call to end it). Answers the row as now stored. A call refusal (`call`) also
 * marks the account row in the same statement (`accounts.credential_refused_at`, migration 0288), which the next
 * attempt reads with its claim: its successful call then ends the refusal (`endCallRefusal`).
 */
async function upsertRefusal(db: Db | Transaction<Database>, accountId: string, platform: PlatformSlug, call = false) {
  const stale = sql<boolean>`credential_refusals.refused_at <= now() - ${WINDOW}`;
  // The CTE's own name adds nothing the insert reads.
  const qc = call
    ? (db.with('marked', (q) => q.updateTable('accounts').set({ credential_refused_at: sql`now()` }).where('id', '=', accountId)) as unknown as QueryCreator<Database>)
    : db;
  return qc
    .insertInto('credential_refusals')
    .values({ account_id: accountId, platform })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        platform,
        refused_at: sql`now()`,
        first_refused_at: sql`case when ${stale} then now() else credential_refusals.first_refused_at end`,
        // An operator's release concerned that earlier run, not this one.
        released_at: sql`case when ${stale} then null else credential_refusals.released_at end`,
      }),
    )
    .returning([
      'released_at',
      sql<boolean>`first_refused_at = refused_at`.as('first'),
      sql<boolean>`first_refused_at <= now() - ${CONFIRM_AFTER}`.as('confirmable'),
      sql<boolean>`first_refused_at <= now() - ${CONFIRM_IN_MASS_AFTER}`.as('confirmable_in_mass'),
    ])
    .executeTakeFirstOrThrow();
}

/**
 * Records the account's refusal and answers whether its platform is refusing in mass (then the refusal is held back).
 * Under the renewal's transaction, after the account row is locked.
 */
export async function recordRefusal(trx: Transaction<Database>, accountId: string, platform: PlatformSlug): Promise<MassRefusal | null> {
  const recorded = await upsertRefusal(trx, accountId, platform);
  // An operator released this account's hold (`releaseHeldRefusals`): its refusal is taken as the user's.
  if (recorded.released_at !== null) return null;
  const { refused, renewed } = await countRefusals(trx, platform);
  return refused >= MIN_REFUSALS && refused >= renewed ? { refused, renewed, first: recorded.first } : null;
}

/** What a call refusal nothing could renew comes to (`recordCallRefusal`). */
type CallRefusal = { kind: 'confirmed' } | { kind: 'held'; mass: boolean; refused: number; first: boolean };

/** Records a call refusal nothing could renew (the rule above `CONFIRM_AFTER`) and answers whether it loses the connection. */
export async function recordCallRefusal(db: Db, accountId: string, platform: PlatformSlug): Promise<CallRefusal> {
  const recorded = await upsertRefusal(db, accountId, platform, true);
  if (recorded.released_at !== null) return { kind: 'confirmed' };
  const { refused } = await countRefusals(db, platform);
  const mass = refused >= MIN_REFUSALS;
  if (recorded.confirmable_in_mass || (recorded.confirmable && !mass)) return { kind: 'confirmed' };
  return { kind: 'held', mass, refused, first: recorded.first };
}

/**
 * The account renewed, or was reconnected: a refusal recorded for it (held back, or before a reconnect) no longer
 * counts. Answers whether a hold ended (a refusal of the last hour, not released), which the renewal logs once. The
 * caller's own write of the account row clears its `credential_refused_at`.
 */
export async function clearRefusal(trx: Transaction<Database>, accountId: string): Promise<boolean> {
  const cleared = await trx
    .deleteFrom('credential_refusals')
    .where('account_id', '=', accountId)
    .returning(['released_at', sql<boolean>`refused_at > now() - ${WINDOW}`.as('recent')])
    .executeTakeFirst();
  return cleared !== undefined && cleared.released_at === null && cleared.recent;
}

/**
 * A platform call with the account's credential succeeded (`credential-keeping-adapters.ts`): the platform takes it,
 * so a call refusal recorded for it is over (README "Credentials", 2026-12-07 night), and a later refusal starts a
 * new run, held again, instead of confirming the earlier one as a lost connection. Asked only when the row the
 * attempt read carried a refusal (`seen`, its `credential_refused_at`), so a call with nothing held costs no
 * statement. One statement; conditional on the mark being still the one read, so a refusal recorded since (another
 * call's, meanwhile) is kept. Answers whether a hold ended (a refusal of the last hour, not released).
 */
export async function endCallRefusal(db: Db, accountId: string, seen: Date): Promise<boolean> {
  const ended = await db
    .with('unmarked', (q) =>
      q.updateTable('accounts').set({ credential_refused_at: null }).where('id', '=', accountId).where('credential_refused_at', '=', seen).returning('id'),
    )
    .deleteFrom('credential_refusals')
    .where('account_id', 'in', (eb) => eb.selectFrom('unmarked').select('id'))
    .returning(['released_at', sql<boolean>`refused_at > now() - ${WINDOW}`.as('recent')])
    .executeTakeFirst();
  return ended !== undefined && ended.released_at === null && ended.recent;
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

/**
 * `herald credentials held`: the refusals held back now (recorded in the last hour, not released, the account not
 * `connection_lost`), oldest first, with each platform's guard counts; changes nothing. What `release` would release,
 * save refusals older than the hour (no longer counted; the account's next refusal is judged afresh).
 */
export async function heldRefusals(db: Db, platform?: PlatformSlug) {
  const held = await db
    .selectFrom('credential_refusals as r')
    .innerJoin('accounts as a', 'a.id', 'r.account_id')
    .select(['r.account_id', 'r.platform', 'r.first_refused_at', 'r.refused_at'])
    .where('r.released_at', 'is', null)
    .where('a.inactive_reason', 'is distinct from', 'connection_lost')
    .where(sql<boolean>`r.refused_at > now() - ${WINDOW}`)
    .$if(platform !== undefined, (qb) => qb.where('r.platform', '=', platform!))
    .orderBy('r.first_refused_at')
    .execute();
  const platforms = [...new Set([...(platform ? [platform] : []), ...held.map((r) => r.platform)])];
  const counts: Partial<Record<PlatformSlug, { refused: number; renewed: number }>> = {};
  for (const p of platforms) counts[p] = await countRefusals(db, p);
  return { held, counts };
}
