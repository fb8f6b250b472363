/**
 * Posts test fixtures: connected accounts inserted directly (credentials sealed as the accounts feature seals them,
 * the user id as context), pointing at the platform stand-ins.
 *
 *   insertXAccount(db, userId, x, options?) → AccountRow   (a stand-in user with its bearer token)
 *   insertMastodonAccount(db, userId, mastodon) → AccountRow
 *   insertTelegramAccount(db, userId, telegram) → { account, chat }   (a new bot of its own, admin of a new channel)
 *   refusalsTakenAsReal(db, account)   its next 401 loses the connection at once (else the first is held)
 */
import { randomUUID } from 'node:crypto';
import { createSealedBox } from '../../src/crypto/sealed-box';
import type { Db } from '../../src/db';
import type { AccountRow, NewAccountRow } from '../../src/db/tables/accounts';
import type { MastodonStandIn } from '../standins/mastodon';
import type { TelegramStandIn } from '../standins/telegram';
import type { XStandIn } from '../standins/x';
import { testEncryptionKey } from '../helpers/api';

export const testSealedBox = createSealedBox(Buffer.from(testEncryptionKey, 'hex'));

export async function insertAccount(db: Db, userId: string, row: Omit<NewAccountRow, 'user_id' | 'credentials_sealed' | 'settings'> & { credentials: Record<string, string>; settings?: Record<string, string> }): Promise<AccountRow> {
  const { credentials, settings, ...rest } = row;
  return db
    .insertInto('accounts')
    .values({ ...rest, user_id: userId, credentials_sealed: testSealedBox.seal(JSON.stringify(credentials), userId), settings: JSON.stringify(settings ?? {}) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The account's next credential refusal is taken as real (README "Credentials", 2026-12-07 evening), as after an
 * operator's `herald credentials release`: its next 401 loses the connection at once, whatever refusals the shared test
 * database holds. Without it a first 401 where nothing can renew is held (`recordCallRefusal`).
 */
export async function refusalsTakenAsReal(db: Db, account: Pick<AccountRow, 'id' | 'platform'>): Promise<void> {
  await db.insertInto('credential_refusals').values({ account_id: account.id, platform: account.platform, released_at: new Date() }).execute();
}

export async function insertXAccount(db: Db, userId: string, x: XStandIn, options: { premium?: boolean; ownCredentials?: boolean; timezone?: string } = {}): Promise<AccountRow> {
  const token = `token-${randomUUID()}`;
  const user = x.addUser({ username: `user${Math.floor(Math.random() * 1e9)}`, bearerToken: token });
  return insertAccount(db, userId, {
    platform: 'x',
    platform_account_id: user.id,
    username: user.username,
    premium: options.premium ?? false,
    own_credentials: options.ownCredentials ?? false,
    timezone: options.timezone ?? null,
    credentials: { access_token: token },
    settings: { user_id: user.id, username: user.username },
  });
}

export async function insertMastodonAccount(db: Db, userId: string, mastodon: MastodonStandIn): Promise<AccountRow> {
  const token = `token-${randomUUID()}`;
  const account = mastodon.addAccount(`user${Math.floor(Math.random() * 1e9)}`, { token });
  return insertAccount(db, userId, {
    platform: 'mastodon',
    platform_account_id: account.id,
    username: account.username,
    credentials: { access_token: token },
    settings: { instance_origin: mastodon.origin, account_id: account.id, username: account.username },
  });
}

/** The threads stand-in's own user, connected as an account of `userId`. */
export async function insertThreadsAccount(db: Db, userId: string, threads: { user: { id: string; username: string; token: string } }): Promise<AccountRow> {
  return insertAccount(db, userId, {
    platform: 'threads',
    platform_account_id: threads.user.id,
    username: threads.user.username,
    credentials: { access_token: threads.user.token },
    settings: { threadsUserId: threads.user.id },
  });
}

let telegramBots = 0;

/** A bot of its own (a token no other test uses) posting to a new channel of the stand-in, connected as an account of `userId`. */
export async function insertTelegramAccount(db: Db, userId: string, telegram: TelegramStandIn) {
  const n = ++telegramBots;
  const token = `7100000:fixture-${n}-${randomUUID()}`;
  const bot = telegram.addBot(token);
  const chat = telegram.addChat({ username: `fixture${n}${Date.now()}` });
  const account = await insertAccount(db, userId, {
    platform: 'telegram',
    platform_account_id: String(chat.id),
    username: chat.username!,
    credentials: { bot_token: token },
    settings: { chat_id: String(chat.id), chat_username: chat.username!, bot_id: String(bot.id), bot_username: bot.username },
  });
  return { account, chat };
}

/** X's answers a test injects into the stand-in (`inject`), as X words them (RFC 7807 problem bodies). */
const xProblem = (status: number, title: string, detail: string) =>
  ({ kind: 'reply', response: { status, headers: { 'content-type': 'application/json' }, json: { title, detail, type: 'about:blank', status } } }) as const;
export const xAnswers = {
  /** The token is refused (expired or revoked): the credential is dead. */
  unauthorized: xProblem(401, 'Unauthorized', 'Unauthorized'),
  /** A delete X will not do. */
  deleteRefused: xProblem(403, 'Forbidden', 'You are not allowed to delete this Post.'),
};
