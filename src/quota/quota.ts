import { DateTime } from 'luxon';
import { sql, type Compilable, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import { inTransaction } from '../db/in-transaction';
import { namedStatements } from '../db/named-statements';
import type { ReservationKind } from '../db/tables/quota';
import type { User } from '../db/tables/users';
import { ApiError } from '../errors';
import { withClaimHolds, type ClaimRecord } from '../idempotency/key-claim';
import { effectiveLimits, planLabel, type EffectiveLimits, type PlanName } from '../plans';

/**
 * Monthly quotas (decisions.md "Plans", publishing-api.md "Quota rules"). Every charge a post carries is a
 * reservation row: reserved inside the transaction that creates the post, spent when the platform took it, refunded
 * on any failure or cancellation. Counters per user and UTC month live in `usage_months`; reserving locks that one
 * row, so concurrent requests of one user queue behind each other and the limit is never overshot.
 *
 * - `post` and `first_comment` count against the monthly post quota: hard on Free (429), overage on paid plans.
 * - `scheduled` counts against the monthly scheduled-post quota, hard on every plan. A scheduled post also holds a
 *   `post` charge (it will publish).
 * - `x_link` / `x_link_first_comment`: the x link-post charge of paid plans, recorded, refunded if nothing went out.
 */

export interface Charge {
  postId: string;
  kind: ReservationKind;
}

const postKinds: ReadonlySet<ReservationKind> = new Set(['post', 'first_comment']);
const xLinkKinds: ReadonlySet<ReservationKind> = new Set(['x_link', 'x_link_first_comment']);

/** `YYYY-MM` of an instant, in UTC (usage resets on the 1st, UTC). */
export function usageMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

function resetsOn(at: Date): string {
  return DateTime.fromJSDate(at, { zone: 'utc' }).startOf('month').plus({ months: 1 }).toISODate() ?? '';
}

export async function loadLimits(db: Kysely<Database>, userId: string): Promise<EffectiveLimits & { planName: PlanName }> {
  const user = await db.selectFrom('users').select(limitColumns).where('id', '=', userId).executeTakeFirstOrThrow();
  return limitsOf(user);
}

/** The `users` columns a user's limits come from, for a read that joins them to another (`readAccountsAndLimits`). */
export const limitColumns = ['plan', 'post_quota', 'scheduled_quota', 'account_limit', 'comment_sync_quota', 'x_comment_read_quota'] as const;

export function limitsOf(user: Pick<User, (typeof limitColumns)[number]>): EffectiveLimits & { planName: PlanName } {
  return { ...effectiveLimits(user.plan, user), planName: user.plan };
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

type QuotaInput = {
  userId: string;
  limits: EffectiveLimits & { planName: PlanName };
  charges: readonly Charge[];
  now: Date;
  /**
   * A condition the statement evaluates before its hard limits, which fails the statement (and so everything it
   * wrote) when the rows the request was validated against changed since they were read (`unchangedSince`).
   */
  guard?: RawBuilder<boolean>;
  /**
   * The charges are for what is already on the platform (a reply found after its request answered 502,
   * `recordFoundReply`): no hard post limit refuses them (a limit refuses requests; this one was reserved within it
   * and cannot be unsent). Still never overage where the post quota is hard: Free bills no post.
   */
  outAlready?: boolean;
  /** What the request made, recorded under its Idempotency-Key claim in the same statement (`claimRecordOf`). */
  claimed?: ClaimRecord;
};

/**
 * Reserves `charges` for `userId` in the month of `now`, or throws 429 `usage_limit_exceeded` (no Retry-After) with
 * the arithmetic of the shortfall. Must run inside the transaction that inserts the posts, as its last statement
 * (the user's month row stays locked until the commit), and the caller must let a refusal roll that transaction back.
 */
export async function reserveQuota(trx: Transaction<Database>, input: QuotaInput): Promise<void> {
  if (input.charges.length === 0) return;
  await reserve(trx, input, sql``);
}

/**
 * `reserveQuota` and `write` (the insert of the posts it charges, a data-modifying statement) as one statement, which
 * is its own transaction: no BEGIN, no COMMIT, and the user's month row is locked only while it runs. A request over
 * a hard limit fails the statement, so the posts and the counters roll back with it, and it throws the same 429 as
 * `reserveQuota`.
 */
export async function reserveQuotaWith(db: Db, input: QuotaInput, write: RawBuilder<unknown> | Compilable): Promise<void> {
  if (input.charges.length === 0) {
    const guard = withClaimHolds(input.guard, input.claimed);
    await (guard ? sql`with written as (${write})${claimedCte(input)} select ${guard} as unchanged` : sql`${write}`).execute(db);
    return;
  }
  await reserve(db, input, sql`written as (${write}), `);
}

/** The claim's record as a further CTE of the statement (`, claim_made as (...)`), or nothing. */
function claimedCte(input: QuotaInput): RawBuilder<unknown> {
  return input.claimed ? sql`, ${input.claimed.cte}` : sql``;
}

/**
 * A create's reservation with its posts' insert repeats its text for each number of posts and set of columns (one
 * post alike every time): named, as the recording is (`namedStatements`); in a transaction, unnamed.
 */
const reservationStatements = namedStatements(32);

async function reserve(db: Db | Transaction<Database>, input: QuotaInput, before: RawBuilder<unknown>): Promise<void> {
  try {
    await reservationStatements.execute(db, reservationOf(input, before));
  } catch (err) {
    throw refusalOf(err, input) ?? err;
  }
}

/** The SQLSTATE a request over a hard limit fails its reservation with (`herald_refuse`, migration 0140). */
const quotaRefusedCode = 'HQ429';

/** The hard limit a request went over, with its numbers: what the reservation raises (as JSON) when it refuses. */
interface HardLimitHit {
  limit: 'scheduled' | 'posts';
  used: number;
  quota: number;
  needed: number;
}

/**
 * The hard limits of a request, in the order they are checked (the first one over decides the sentence): the
 * scheduled-post quota (hard on every plan), and the post quota where the plan makes it hard (Free). An unlimited
 * quota is null, which never refuses. The reservation's statement checks them (`reservationOf`), the only place.
 */
function hardLimitsOf(input: QuotaInput, needed: { posts: number; scheduled: number }) {
  const { limits } = input;
  const quotaOf = (n: number) => (Number.isFinite(n) ? n : null);
  return [
    { limit: 'scheduled' as const, usedBefore: sql.ref('scheduled_before'), quota: quotaOf(limits.scheduledPerMonth), needed: needed.scheduled },
    { limit: 'posts' as const, usedBefore: sql.ref('posts_before'), quota: limits.postQuotaHard && !input.outAlready ? quotaOf(limits.postsPerMonth) : null, needed: needed.posts },
  ];
}

/**
 * One statement, the user's month row taken in it: it creates or locks the row and adds this request's charges (so
 * every concurrent request of this user waits here and counts on top of the previous one's committed counters), and
 * inserts the reservations. A request over a hard limit fails the statement itself (`herald_refuse` with the
 * `HardLimitHit`), so nothing it wrote stays; `refusalOf` turns that failure into the 429.
 */
function reservationOf(input: QuotaInput, before: RawBuilder<unknown>) {
  const month = usageMonth(input.now);
  const { limits } = input;
  const postsNeeded = input.charges.filter((c) => postKinds.has(c.kind)).length;
  const scheduledNeeded = input.charges.filter((c) => c.kind === 'scheduled').length;
  const xLinks = input.charges.filter((c) => xLinkKinds.has(c.kind)).length;
  // Post charges past the monthly post quota are overage (billed per post on paid plans): the n-th post charge of
  // this request is overage when the counter before it plus n reaches the quota. The reservation's flag says what
  // the charge was when taken; the month's counter is the bill, and a refund lowers it by count, not by flag
  // (`refundQuota`): a charge reserved within the quota and refunded later brings the month back under by one.
  // Where the quota is hard (Free) a post past it is never overage: nothing is billed; only a charge for a reply
  // already out gets past it (`outAlready`), and the month's posts count it. No quota, no overage: spelled out in the
  // statement, as `greatest` skips a null (`greatest(0, null)` is 0, which would make every post overage).
  const postQuota = Number.isFinite(limits.postsPerMonth) && !limits.postQuotaHard ? limits.postsPerMonth : null;
  let ordinal = 0;
  const postOrdinals = input.charges.map((c) => (postKinds.has(c.kind) ? ordinal++ : null));
  const overHardLimit = hardLimitsOf(input, { posts: postsNeeded, scheduled: scheduledNeeded }).map(
    (hard) => sql`when ${hard.needed}::integer > 0 and ${hard.usedBefore} + ${hard.needed}::integer > ${hard.quota}::integer
      then herald_refuse(${quotaRefusedCode}, json_build_object('limit', ${hard.limit}::text, 'used', ${hard.usedBefore}, 'quota', ${hard.quota}::integer, 'needed', ${hard.needed}::integer)::text)`,
  );
  const guard = withClaimHolds(input.guard, input.claimed);
  return sql`
    with ${before}${input.claimed ? sql`${input.claimed.cte}, ` : sql``}usage as (
      insert into usage_months as u (user_id, month, posts, scheduled, overage, x_link_posts)
      values (${input.userId}, ${month}, ${postsNeeded}, ${scheduledNeeded}, ${postQuota === null ? 0 : Math.max(0, postsNeeded - Math.max(0, postQuota))}, ${xLinks})
      on conflict (user_id, month) do update set
        posts = u.posts + excluded.posts,
        scheduled = u.scheduled + excluded.scheduled,
        overage = u.overage + case when ${postQuota}::integer is null then 0 else greatest(0, excluded.posts - greatest(0, ${postQuota}::integer - u.posts)) end,
        x_link_posts = u.x_link_posts + excluded.x_link_posts
      returning u.posts - ${postsNeeded}::integer as posts_before, u.scheduled - ${scheduledNeeded}::integer as scheduled_before
    ), reserved as (
      insert into quota_reservations (user_id, post_id, month, kind, overage)
      select ${input.userId}, charge.post_id, ${month}, charge.kind, coalesce(${postQuota}::integer is not null and charge.post_ordinal >= greatest(0, ${postQuota}::integer - usage.posts_before), false)
      from usage, unnest(${input.charges.map((c) => c.postId)}::uuid[], ${input.charges.map((c) => c.kind)}::text[], ${postOrdinals}::integer[]) as charge(post_id, kind, post_ordinal)
    )
    select ${guard ? sql`${guard} as unchanged, ` : sql``}case ${sql.join(overHardLimit, sql` `)} end as refused from usage`;
}

/** The 429 of a reservation that failed over a hard limit (its `HardLimitHit`); null for any other failure. */
function refusalOf(err: unknown, input: QuotaInput): ApiError | null {
  if ((err as { code?: string }).code !== quotaRefusedCode) return null;
  const hit = JSON.parse((err as Error).message) as HardLimitHit;
  const { planName } = input.limits;
  const label = planLabel(planName);
  const left = Math.max(0, hit.quota - hit.used);
  const rest = `${left} ${left === 1 ? 'is' : 'are'} left (resets ${resetsOn(input.now)}, UTC)`;
  return new ApiError(
    'usage_limit_exceeded',
    hit.limit === 'scheduled'
      ? `Monthly scheduled-post quota reached: ${hit.used} of ${plural(hit.quota, 'scheduled post')} used this month on ${label}; this request needs ${hit.needed} and ${rest}`
      : `Monthly post quota reached: ${hit.used} of ${plural(hit.quota, 'post')} used this month on ${label}; this request needs ${hit.needed} (first comments count as posts) and ${rest}`,
  );
}

/**
 * Returns what `postIds` still hold reserved (all kinds, or only `kinds`). Idempotent: a refunded or spent
 * reservation is never touched again. Runs in its own transaction unless given one.
 */
export async function refundQuota(db: Db | Transaction<Database>, postIds: readonly string[], kinds?: readonly ReservationKind[]): Promise<number> {
  if (postIds.length === 0) return 0;
  const run = async (trx: Transaction<Database>) => {
    let update = trx
      .updateTable('quota_reservations')
      .set({ state: 'refunded', updated_at: sql`now()` })
      .where('post_id', 'in', postIds)
      .where('state', '=', 'reserved');
    if (kinds) update = update.where('kind', 'in', kinds);
    const refunded = await update.returning(['user_id', 'month', 'kind']).execute();
    const byMonth = new Map<string, { userId: string; month: string; posts: number; scheduled: number; xLinks: number }>();
    for (const r of refunded) {
      const key = `${r.user_id}/${r.month}`;
      const entry = byMonth.get(key) ?? { userId: r.user_id, month: r.month, posts: 0, scheduled: 0, xLinks: 0 };
      if (postKinds.has(r.kind)) entry.posts += 1;
      if (r.kind === 'scheduled') entry.scheduled += 1;
      if (xLinkKinds.has(r.kind)) entry.xLinks += 1;
      byMonth.set(key, entry);
    }
    for (const e of byMonth.values()) {
      await trx
        .updateTable('usage_months')
        .set({
          posts: sql`greatest(0, posts - ${e.posts})`,
          scheduled: sql`greatest(0, scheduled - ${e.scheduled})`,
          // Overage is the month's posts past its quota, whichever charge is refunded: each post charge returned
          // takes one off it while there is any (the count was over by it), never one the month is not over by. A
          // refund of a charge reserved within the quota used to leave it, billing a post the month no longer had.
          overage: sql`greatest(0, overage - ${e.posts})`,
          x_link_posts: sql`greatest(0, x_link_posts - ${e.xLinks})`,
        })
        .where('user_id', '=', e.userId)
        .where('month', '=', e.month)
        .execute();
    }
    return refunded.length;
  };
  return inTransaction(db, run);
}

/**
 * A scheduled post edited: the charges of `kinds` it holds become `needed` (charges of those kinds only). A charge
 * it still needs stays where it was booked (an edit in a later month moves nothing into that month: editing costs no
 * quota); one it no longer needs is refunded; one it newly needs is reserved in the month of `input.now`, as a
 * create's would be, and can be refused (429) like one.
 */
export async function replaceCharges(trx: Transaction<Database>, postId: string, kinds: readonly ReservationKind[], input: QuotaInput): Promise<void> {
  const held = await trx.selectFrom('quota_reservations').select('kind').where('post_id', '=', postId).where('state', '=', 'reserved').where('kind', 'in', kinds).execute();
  const heldKinds = new Set(held.map((r) => r.kind));
  const neededKinds = new Set(input.charges.map((c) => c.kind));
  const dropped = [...heldKinds].filter((kind) => !neededKinds.has(kind));
  if (dropped.length > 0) await refundQuota(trx, [postId], dropped);
  await reserveQuota(trx, { ...input, charges: input.charges.filter((c) => !heldKinds.has(c.kind)) });
}

/** The platform took it: the reservations of `postIds` (all kinds, or only `kinds`) are spent for good. */
export async function spendQuota(db: Db | Transaction<Database>, postIds: readonly string[], kinds?: readonly ReservationKind[]): Promise<void> {
  if (postIds.length === 0) return;
  await spendReservedOf(sql`select unnest(${postIds}::uuid[])`, kinds).execute(db);
}

/**
 * `spendQuota` as a statement of its own, for the posts a query names (`select <post id> ...`), so a caller can make
 * it the last step of one statement whose earlier steps decide which posts spend (see `recordPublishedAll`).
 */
export function spendReservedOf(postIds: RawBuilder<unknown>, kinds?: readonly ReservationKind[]): RawBuilder<unknown> {
  // The kinds are the code's own constants: literals, so a generic plan estimates them as a custom plan does.
  const ofKinds = kinds ? sql` and kind in (${sql.join(kinds.map((kind) => sql.lit(kind)))})` : sql``;
  return sql`update quota_reservations set state = 'spent', updated_at = now() where post_id in (${postIds}) and state = 'reserved'${ofKinds}`;
}

interface UsageSnapshot {
  month: string;
  posts: number;
  scheduled: number;
  overage: number;
  x_link_posts: number;
}

/** The counters of one user for the month of `at` (zeros when nothing was used). */
export async function usageFor(db: Db, userId: string, at: Date): Promise<UsageSnapshot> {
  const month = usageMonth(at);
  const row = await db.selectFrom('usage_months').selectAll().where('user_id', '=', userId).where('month', '=', month).executeTakeFirst();
  return { month, posts: row?.posts ?? 0, scheduled: row?.scheduled ?? 0, overage: row?.overage ?? 0, x_link_posts: row?.x_link_posts ?? 0 };
}

/**
 * What `postId` was charged before, whatever became of it: when its earliest charge was taken, whether one is still
 * `reserved` and whether one was spent; null when it never held one. Refunded and spent reservations stay as rows,
 * so this outlives them. One read.
 */
export async function chargedBefore(db: Db, postId: string): Promise<{ since: Date; reserved: boolean; spent: boolean } | null> {
  const row = await db
    .selectFrom('quota_reservations')
    .select((eb) => [
      eb.fn.min('created_at').as('since'),
      sql<boolean>`bool_or(state = 'reserved')`.as('reserved'),
      sql<boolean>`bool_or(state = 'spent')`.as('spent'),
    ])
    .where('post_id', '=', postId)
    .executeTakeFirst();
  return row?.since ? { since: new Date(row.since as Date), reserved: row.reserved === true, spent: row.spent === true } : null;
}
