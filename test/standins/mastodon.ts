/**
 * Mastodon REST stand-in (protocols.md section 3): verify_credentials, statuses create (honouring
 * Idempotency-Key for an hour) / delete / context, media v2 upload (200 or 202) and media polling (206 until
 * processed). Errors are `{"error": "..."}` with the status code that matters; every answer carries
 * X-RateLimit-* headers, the reset as an ISO 8601 timestamp.
 */
import { StandIn, StandInReply, type RecordedRequest, type StandInResponse } from './kit';
import { MetricsBook } from './metrics';

export interface MastodonStandInAccount {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  url: string;
  avatar: string;
  token?: string;
  scopes: Set<string>;
}

interface MastodonStoredStatus {
  id: string;
  account: MastodonStandInAccount;
  text: string;
  in_reply_to_id: string | null;
  media_ids: string[];
  created_at: string;
  deleted: boolean;
  idempotencyKey?: string;
}

interface StoredMedia {
  id: string;
  type: 'image' | 'video' | 'gifv';
  mimeType: string;
  size: number;
  description: string | null;
  pollsLeft: number;
  fails: boolean;
}

const IDEMPOTENCY_MS = 3600_000;
const MAX_CHARS = 500;

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

export async function startMastodonStandIn() {
  const standIn = new StandIn('mastodon');
  const accounts = new Map<string, MastodonStandInAccount>();
  const statuses: MastodonStoredStatus[] = [];
  const media = new Map<string, StoredMedia>();
  const idempotency = new Map<string, { statusId: string; at: number }>();
  let nextId = 113500000000000000n;
  const newId = () => String(++nextId);
  const config = { videoPollsUntilReady: 2, videoFails: false, /** Mastodon 4.5+ reports `quotes_count`. */ quotesCount: true };
  let origin = '';

  const resetIso = () => new Date(Math.ceil(Date.now() / 300_000) * 300_000).toISOString().replace('Z', '000Z');
  const limitHeaders = () => ({ 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '299', 'x-ratelimit-reset': resetIso() });
  const reply = (status: number, json: unknown): StandInResponse => ({ status, json, headers: limitHeaders() });
  function fail(status: number, error: string): never {
    throw new StandInReply(reply(status, { error }));
  }

  function authenticate(req: RecordedRequest, scope?: string): MastodonStandInAccount {
    const header = String(req.headers.authorization ?? '');
    const account = [...accounts.values()].find((a) => a.token && header === `Bearer ${a.token}`);
    if (!account) fail(401, 'The access token is invalid');
    if (scope && !account.scopes.has(scope) && !account.scopes.has(scope.split(':')[0])) fail(403, 'This action is outside the authorized scopes');
    return account;
  }

  function accountShape(a: MastodonStandInAccount) {
    return { id: a.id, username: a.username, acct: a.acct, display_name: a.display_name, url: a.url, avatar: a.avatar };
  }

  function mediaShape(m: StoredMedia) {
    const ready = m.pollsLeft <= 0 && !m.fails;
    return {
      id: m.id,
      type: m.type,
      url: ready ? `${origin}/system/media_attachments/${m.id}/original` : null,
      preview_url: ready ? `${origin}/system/media_attachments/${m.id}/small` : null,
      description: m.description,
      blurhash: null,
    };
  }

  const live = (id: string) => statuses.find((s) => s.id === id && !s.deleted);

  function statusShape(s: MastodonStoredStatus): Record<string, unknown> {
    const parent = s.in_reply_to_id ? statuses.find((p) => p.id === s.in_reply_to_id) : undefined;
    return {
      id: s.id,
      created_at: s.created_at,
      in_reply_to_id: s.in_reply_to_id,
      in_reply_to_account_id: parent?.account.id ?? null,
      visibility: 'public',
      uri: `${origin}/users/${s.account.username}/statuses/${s.id}`,
      url: `${origin}/@${s.account.username}/${s.id}`,
      replies_count: statuses.filter((r) => !r.deleted && r.in_reply_to_id === s.id).length,
      reblogs_count: 0,
      favourites_count: 0,
      content: `<p>${escapeHtml(s.text).replace(/\n\n/g, '</p><p>').replace(/\n/g, '<br />')}</p>`,
      account: accountShape(s.account),
      media_attachments: s.media_ids.map((id) => mediaShape(media.get(id)!)),
    };
  }

  function params(req: RecordedRequest): Record<string, any> {
    if (req.json) return req.json;
    const form = { ...(req.form ?? {}) } as Record<string, any>;
    const ids = Object.entries(form).filter(([k]) => k === 'media_ids[]').map(([, v]) => v);
    if (ids.length) form.media_ids = ids;
    return form;
  }

  function addStatus(account: MastodonStandInAccount, text: string, inReplyTo: string | null, mediaIds: string[] = [], key?: string) {
    const status: MastodonStoredStatus = { id: newId(), account, text, in_reply_to_id: inReplyTo, media_ids: mediaIds, created_at: new Date().toISOString(), deleted: false, idempotencyKey: key };
    statuses.push(status);
    return status;
  }

  function createStatus(req: RecordedRequest): StandInResponse {
    const account = authenticate(req, 'write:statuses');
    const key = req.headers['idempotency-key'] as string | undefined;
    const p = params(req);
    // The controller finds the status replied to before the idempotency lookup runs.
    const inReplyTo = p.in_reply_to_id ? String(p.in_reply_to_id) : null;
    if (inReplyTo && !live(inReplyTo)) fail(404, 'Record not found');
    const remembered = key ? idempotency.get(`${account.id}:${key}`) : undefined;
    if (remembered && Date.now() - remembered.at < IDEMPOTENCY_MS) {
      // Mastodon looks the remembered status up by id: one deleted since is 404 for the rest of the key's hour.
      const earlier = live(remembered.statusId);
      if (!earlier) fail(404, 'Record not found');
      return reply(200, statusShape(earlier));
    }
    const text = String(p.status ?? '');
    const mediaIds: string[] = (p.media_ids ?? []).map(String);
    if (!text.trim() && mediaIds.length === 0) fail(422, "Validation failed: Text can't be blank");
    if ([...text].length > MAX_CHARS) fail(422, `Validation failed: Text character limit of ${MAX_CHARS} exceeded`);
    if (mediaIds.length > 4) fail(422, 'Validation failed: Media attachments too many attachments');
    for (const id of mediaIds) {
      const m = media.get(id);
      if (!m) fail(422, 'Validation failed: Media attachments are invalid');
      if (m.pollsLeft > 0 || m.fails) fail(422, 'Cannot attach files that have not finished processing. Try again in a moment!');
    }
    const status = addStatus(account, text, inReplyTo, mediaIds, key);
    if (key) idempotency.set(`${account.id}:${key}`, { statusId: status.id, at: Date.now() });
    return reply(200, statusShape(status));
  }

  function descendants(id: string): MastodonStoredStatus[] {
    return statuses.filter((s) => !s.deleted && s.in_reply_to_id === id).flatMap((s) => [s, ...descendants(s.id)]);
  }

  const metrics = new MetricsBook();

  /** The Status with the counts a test set (protocols.md section 12); a public status needs no token. */
  function readStatus(req: RecordedRequest): StandInResponse {
    if (req.headers.authorization) authenticate(req, 'read:statuses');
    const status = live(req.params.id);
    if (!status) fail(404, 'Record not found');
    const m = metrics.get(status.id);
    const shape = statusShape(status);
    return reply(200, {
      ...shape,
      replies_count: m.replies ?? shape.replies_count,
      reblogs_count: m.reposts ?? 0,
      favourites_count: m.likes ?? 0,
      ...(config.quotesCount ? { quotes_count: m.quotes ?? 0 } : {}),
    });
  }

  standIn
    .on('GET', '/api/v1/accounts/verify_credentials', (req) => {
      const a = authenticate(req);
      return reply(200, { ...accountShape(a), locked: false, bot: false, source: { privacy: 'public', sensitive: false, language: null, note: '', fields: [] } });
    })
    .on('POST', '/api/v1/statuses', createStatus)
    .on('DELETE', '/api/v1/statuses/:id', (req) => {
      const account = authenticate(req, 'write:statuses');
      const status = live(req.params.id);
      // Not owned or already deleted: both 404 (protocols.md).
      if (!status || status.account.id !== account.id) fail(404, 'Record not found');
      status.deleted = true;
      return reply(200, { ...statusShape(status), text: status.text });
    })
    .on('GET', '/api/v1/statuses/:id', readStatus)
    .on('GET', '/api/v1/statuses/:id/context', (req) => {
      authenticate(req, 'read:statuses');
      const status = live(req.params.id);
      if (!status) fail(404, 'Record not found');
      const ancestors: MastodonStoredStatus[] = [];
      for (let p = status.in_reply_to_id ? live(status.in_reply_to_id) : undefined; p; p = p.in_reply_to_id ? live(p.in_reply_to_id) : undefined) ancestors.unshift(p);
      return reply(200, { ancestors: ancestors.map(statusShape), descendants: descendants(status.id).map(statusShape) });
    })
    .on('POST', '/api/v2/media', (req) => {
      authenticate(req, 'write:media');
      const file = req.multipart?.find((p) => p.name === 'file' && p.file)?.file;
      if (!file) fail(422, "Validation failed: File can't be blank");
      const kind = file.mimeType.startsWith('video/') ? 'video' : file.mimeType === 'image/gif' ? 'gifv' : 'image';
      if (!/^(image\/(jpeg|png|gif|webp)|video\/(mp4|quicktime))$/.test(file.mimeType)) fail(422, 'Validation failed: File content type is invalid');
      const description = req.form?.description ?? null;
      if (description && description.length > 1500) fail(422, 'Validation failed: Description is too long (maximum is 1500 characters)');
      const m: StoredMedia = { id: newId(), type: kind, mimeType: file.mimeType, size: file.data.length, description, pollsLeft: kind === 'image' ? 0 : config.videoPollsUntilReady, fails: kind !== 'image' && config.videoFails };
      media.set(m.id, m);
      return reply(kind === 'image' ? 200 : 202, mediaShape(m));
    })
    .on('GET', '/api/v1/media/:id', (req) => {
      authenticate(req, 'write:media');
      const m = media.get(req.params.id);
      if (!m) fail(404, 'Record not found');
      if (m.pollsLeft > 0) m.pollsLeft -= 1;
      if (m.pollsLeft > 0) return reply(206, mediaShape(m));
      if (m.fails) fail(422, 'Error processing thumbnail for uploaded media');
      return reply(200, mediaShape(m));
    });
  origin = await standIn.start();

  let accountCount = 0;
  function addAccount(username: string, opts: { token?: string; scopes?: string[]; remoteHost?: string } = {}): MastodonStandInAccount {
    accountCount += 1;
    const host = opts.remoteHost ?? new URL(origin).host;
    const account: MastodonStandInAccount = {
      id: String(109000000000000000n + BigInt(accountCount)),
      username,
      acct: opts.remoteHost ? `${username}@${opts.remoteHost}` : username,
      display_name: username.replace(/^./, (c) => c.toUpperCase()),
      url: opts.remoteHost ? `https://${host}/@${username}` : `${origin}/@${username}`,
      avatar: `${origin}/avatars/${username}.png`,
      token: opts.token,
      scopes: new Set(opts.scopes ?? ['read', 'write']),
    };
    accounts.set(account.id, account);
    return account;
  }

  return {
    standIn,
    origin,
    addAccount,
    /** Someone (local or remote) replies to a status. */
    addReply: (to: string, author: MastodonStandInAccount, text: string) => {
      if (!live(to)) throw new Error(`no live status ${to}`);
      return addStatus(author, text, to);
    },
    /**
     * The server's clock moves on by `ms` for the Idempotency-Keys it keeps (tests skip only the workflow's time): a
     * key older than an hour is forgotten, and the same key then makes a new status.
     */
    ageIdempotencyKeys(ms: number) {
      for (const remembered of idempotency.values()) remembered.at -= ms;
    },
    statuses: () => statuses,
    liveStatuses: () => statuses.filter((s) => !s.deleted),
    media: (id: string) => media.get(id),
    config,
    /** Numbers the status reports, in Herald's keys. */
    setMetrics: (id: string, values: Parameters<MetricsBook['set']>[1]) => metrics.set(id, values),
    /** The next `times` matching requests get 429 with Mastodon's headers; `reset` is when the window reopens. */
    rateLimit(path: string | RegExp, reset: Date, times = 1) {
      standIn.inject(
        { path },
        {
          kind: 'reply',
          response: {
            status: 429,
            headers: { 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset.toISOString().replace('Z', '000Z') },
            json: { error: 'Too many requests' },
          },
        },
        times,
      );
    },
    stop: () => standIn.stop(),
  };
}

export type MastodonStandIn = Awaited<ReturnType<typeof startMastodonStandIn>>;
