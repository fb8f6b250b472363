import { sql, type Kysely } from 'kysely';

/**
 * The current month's `usage_months.overage` recomputed from its charges as the refund rule of 2026-12-07 keeps it
 * (README "Plans and quotas"): before that rule a refund lowered the counter only by the charges flagged overage when
 * reserved, so a refund of a charge reserved within the quota left a phantom overage, billed. Past months are left as
 * billed.
 *
 * The charges are the whole history of the counter: each post charge (`post`, `first_comment`) flagged `overage`
 * added one when reserved (the flag and the counter's increment are one formula, `reservationOf`), and each refunded
 * post charge took one off at its `updated_at`, never below 0 (`refundQuota`). Replayed in time order (a charge's
 * reservation before its own refund at the same instant), that running count with its floor at 0 is what the counter
 * would hold had the rule always been in force: the sum of the steps less the lowest point the plain running sum
 * reached below 0.
 *
 * Safe on a live database: one statement, which only lowers a counter by its phantom (stored less replayed, both as
 * this statement's snapshot saw them; never raises one), so running it again finds nothing to change. The phantom is
 * taken off the row as it is when the statement locks it (`u.overage`), not written as an absolute number: a
 * reservation or refund committed meanwhile (the row lock makes the statement wait for it, then it re-reads the row)
 * keeps its own step.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update usage_months as u
    set overage = greatest(0, u.overage - repaired.phantom)
    from (
      select m.user_id, m.month, m.overage - coalesce(replayed.overage, 0) as phantom
      from usage_months m
      left join (
        select user_id, month, sum(step) - least(0, min(running)) as overage
        from (
          select user_id, month, step,
            sum(step) over (partition by user_id, month order by at, is_refund rows between unbounded preceding and current row) as running
          from (
            select user_id, month, created_at as at, false as is_refund, 1 as step
            from quota_reservations
            where kind in ('post', 'first_comment') and overage and month = to_char(now() at time zone 'utc', 'YYYY-MM')
            union all
            select user_id, month, updated_at, true, -1
            from quota_reservations
            where kind in ('post', 'first_comment') and state = 'refunded' and month = to_char(now() at time zone 'utc', 'YYYY-MM')
          ) steps
        ) replay
        group by user_id, month
      ) replayed on replayed.user_id = m.user_id and replayed.month = m.month
      where m.month = to_char(now() at time zone 'utc', 'YYYY-MM')
    ) repaired
    where u.user_id = repaired.user_id and u.month = repaired.month and repaired.phantom > 0`.execute(db);
}

/** Nothing to undo: a phantom is not put back. */
export async function down(): Promise<void> {}
