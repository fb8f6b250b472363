import type { Db } from '../db';
import type { User } from '../db/tables/users';
import type { CustomQuotas, PlanName } from '../plans';

export async function createUser(db: Db, input: { plan: PlanName; email?: string | null }): Promise<User> {
  return db
    .insertInto('users')
    .values({
      plan: input.plan,
      email: input.email ?? null,
      post_quota: null,
      scheduled_quota: null,
      account_limit: null,
      comment_sync_quota: null,
      x_comment_read_quota: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findUser(db: Db, userId: string): Promise<User | null> {
  return (await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst()) ?? null;
}

/** Changes the plan; custom numbers given are set, the others kept. Null when the user does not exist. */
export async function setPlan(
  db: Db,
  userId: string,
  plan: PlanName,
  custom: Partial<CustomQuotas> = {},
): Promise<User | null> {
  return (
    (await db
      .updateTable('users')
      .set({ plan, ...custom })
      .where('id', '=', userId)
      .returningAll()
      .executeTakeFirst()) ?? null
  );
}
