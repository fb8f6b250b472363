/**
 * Bluesky stand-in: a small XRPC server answering as a PDS does (protocols.md sections 2 and 11): sessions with
 * access/refresh tokens, uploadBlob, createRecord (caller-chosen TID rkeys; the same rkey twice answers 500
 * InternalServerError), getRecord (public; 400 RecordNotFound), deleteRecord (already deleted → 200 {}), resolveHandle,
 * and the AppView's getPostThread. Error bodies are `{"error":"<Name>","message":"..."}` with the PDS's statuses.
 * Other accounts' replies are added with `reply()`; `expireAccessTokens()` / `revokeSessions()` drive session renewal.
 */
import { createHash, randomBytes } from 'node:crypto';
import { StandIn, StandInReply, type RecordedRequest, type StandInResponse } from './kit';
import { MetricsBook } from './metrics';

const POST = 'app.bsky.feed.post';
const PROFILE = 'app.bsky.actor.profile';
const TID = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;
const MAX_GRAPHEMES = 300;
/** The post lexicon's `maxLength` for text, in UTF-8 bytes; checked before the graphemes, as the lexicon validator does. */
const MAX_TEXT_BYTES = 3_000;
const MAX_IMAGES = 4;
const MAX_IMAGE_BYTES = 2_000_000;
const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

export interface BlueskyStandInAccount {
  did: string;
  handle: string;
  appPassword: string;
  displayName?: string;
}

interface BlueskyStoredRecord {
  uri: string;
  cid: string;
  did: string;
  collection: string;
  rkey: string;
  value: any;
  indexedAt: string;
  likeCount: number;
}

interface Token {
  did: string;
  kind: 'access' | 'refresh';
  expired: boolean;
}

function xrpcError(status: number, error: string, message: string, headers?: Record<string, string>): never {
  throw new StandInReply({ status, json: { error, message }, headers });
}

function ok(json: unknown): StandInResponse {
  return { status: 200, json };
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** A real CIDv1 (sha2-256) string: dag-cbor (0x71) for records, raw (0x55) for blobs. */
function cidOf(bytes: Buffer, codec: 0x71 | 0x55): string {
  const digest = createHash('sha256').update(bytes).digest();
  return `b${base32(Buffer.concat([Buffer.from([0x01, codec, 0x12, 0x20]), digest]))}`;
}

function graphemes(text: string): number {
  return [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(text)].length;
}

function sniffImage(data: Buffer): string | undefined {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

/** `demoAccount`: for running by hand (registry.ts), an account `demo.herald.test` with app password `demo-demo-demo-demo`. */
export async function startBlueskyStandIn(options: { demoAccount?: boolean } = {}) {
  const standIn = new StandIn('bluesky');
  const accounts = new Map<string, BlueskyStandInAccount>();
  const tokens = new Map<string, Token>();
  const blobs = new Map<string, { did: string; mimeType: string; size: number }>();
  const records = new Map<string, BlueskyStoredRecord>();
  let revision = 0;

  const origin = () => standIn.origin;

  function addAccount(opts: { handle: string; appPassword?: string; displayName?: string }): BlueskyStandInAccount {
    const did = `did:plc:${base32(createHash('sha256').update(opts.handle).digest()).slice(0, 24)}`;
    const account = { did, handle: opts.handle, appPassword: opts.appPassword ?? 'abcd-efgh-ijkl-mnop', displayName: opts.displayName };
    accounts.set(did, account);
    if (opts.displayName) {
      putRecord(did, PROFILE, 'self', { $type: PROFILE, displayName: opts.displayName });
    }
    return account;
  }

  function accountBy(identifier: string): BlueskyStandInAccount | undefined {
    const id = identifier.toLowerCase().replace(/^@/, '');
    return accounts.get(id) ?? [...accounts.values()].find((a) => a.handle === id);
  }

  function issueToken(did: string, kind: Token['kind']): string {
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const scope = kind === 'access' ? 'com.atproto.appPass' : 'com.atproto.refresh';
    const exp = Math.floor(Date.now() / 1000) + (kind === 'access' ? 7200 : 90 * 86400);
    const token = `${part({ typ: kind === 'access' ? 'at+jwt' : 'refresh+jwt', alg: 'ES256K' })}.${part({ scope, sub: did, exp })}.${randomBytes(16).toString('base64url')}`;
    tokens.set(token, { did, kind, expired: false });
    return token;
  }

  function didDoc(account: BlueskyStandInAccount) {
    return {
      '@context': ['https://www.w3.org/ns/did/v1'],
      id: account.did,
      alsoKnownAs: [`at://${account.handle}`],
      verificationMethod: [],
      service: [{ id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: origin() }],
    };
  }

  function sessionBody(account: BlueskyStandInAccount) {
    return {
      accessJwt: issueToken(account.did, 'access'),
      refreshJwt: issueToken(account.did, 'refresh'),
      handle: account.handle,
      did: account.did,
      didDoc: didDoc(account),
      email: `${account.handle.split('.')[0]}@example.com`,
      emailConfirmed: true,
      active: true,
    };
  }

  /** The PDS's token checks, in its order (section 11). Returns the authenticated account. */
  function authenticate(req: RecordedRequest, kind: Token['kind'] = 'access'): BlueskyStandInAccount {
    const header = req.headers.authorization;
    if (!header) xrpcError(401, 'AuthMissing', 'Authentication Required');
    if (!header.startsWith('Bearer ')) xrpcError(400, 'InvalidToken', 'Unexpected authorization type');
    const token = tokens.get(header.slice(7));
    if (!token) xrpcError(400, 'InvalidToken', 'Token could not be verified');
    if (token.kind !== kind) xrpcError(400, 'InvalidToken', 'Invalid token type');
    if (token.expired) xrpcError(400, 'ExpiredToken', 'Token has expired');
    const account = accounts.get(token.did);
    if (!account) xrpcError(400, 'InvalidToken', 'Token could not be verified');
    return account;
  }

  function putRecord(did: string, collection: string, rkey: string, value: unknown): BlueskyStoredRecord {
    const uri = `at://${did}/${collection}/${rkey}`;
    const record: BlueskyStoredRecord = {
      uri,
      cid: cidOf(Buffer.from(JSON.stringify(value)), 0x71),
      did,
      collection,
      rkey,
      value,
      indexedAt: new Date().toISOString(),
      likeCount: 0,
    };
    records.set(uri, record);
    return record;
  }

  function nextTid(): string {
    // Microseconds since the epoch, strictly increasing, clock id 0.
    const micros = BigInt(Date.now()) * 1000n + BigInt(revision++ % 1000);
    let value = micros << 10n;
    let out = '';
    for (let i = 0; i < 13; i += 1) {
      out = '234567abcdefghijklmnopqrstuvwxyz'[Number(value & 31n)] + out;
      value >>= 5n;
    }
    return out;
  }

  function commit() {
    return { cid: cidOf(randomBytes(8), 0x71), rev: nextTid() };
  }

  /** The lexicon and blob checks the PDS runs on `app.bsky.feed.post`, with its messages. */
  function validatePost(did: string, record: any): void {
    const invalid = (detail: string) => xrpcError(400, 'InvalidRequest', `Invalid ${POST} record: ${detail}`);
    if (typeof record?.text !== 'string') invalid('Record must have the property "text"');
    if (typeof record.createdAt !== 'string') invalid('Record must have the property "createdAt"');
    if (Number.isNaN(Date.parse(record.createdAt))) invalid('Record/createdAt must be an valid atproto datetime (Invalid datetime)');
    const bytes = Buffer.byteLength(record.text, 'utf8');
    if (bytes > MAX_TEXT_BYTES) invalid(`Record/text string too big (maximum ${MAX_TEXT_BYTES}, got ${bytes})`);
    const length = graphemes(record.text);
    if (length > MAX_GRAPHEMES) invalid(`Record/text grapheme too big (maximum ${MAX_GRAPHEMES}, got ${length})`);
    for (const facet of record.facets ?? []) {
      for (const feature of facet.features ?? []) {
        if (feature.$type === 'app.bsky.richtext.facet#mention' && !/^did:[a-z]+:[a-zA-Z0-9._:%-]+$/.test(feature.did ?? '')) {
          invalid('Record/facets/0/features/0/did must be a valid did');
        }
      }
    }
    const embed = record.embed;
    if (embed?.$type === 'app.bsky.embed.images') {
      const images: any[] = embed.images ?? [];
      if (images.length > MAX_IMAGES) invalid(`Record/embed/images array too big (maximum ${MAX_IMAGES}, got ${images.length})`);
      images.forEach((image, i) => {
        if (typeof image.alt !== 'string') invalid(`Missing required key "alt" at Record/embed/images/${i}`);
        const ref = image.image?.ref?.$link;
        const blob = ref ? blobs.get(ref) : undefined;
        if (!blob || blob.did !== did) xrpcError(400, 'BlobNotFound', `Could not find blob: ${ref}`);
        if (blob.size > MAX_IMAGE_BYTES) invalid(`Record/embed/images/${i}/image blob too big (maximum ${MAX_IMAGE_BYTES}, got ${blob.size})`);
      });
    }
    if (record.reply && !(record.reply.root?.uri && record.reply.root?.cid && record.reply.parent?.uri && record.reply.parent?.cid)) {
      invalid('Record/reply must have the properties "root" and "parent"');
    }
  }

  function postView(record: BlueskyStoredRecord) {
    const author = accounts.get(record.did)!;
    const images: any[] = record.value.embed?.$type === 'app.bsky.embed.images' ? record.value.embed.images : [];
    return {
      uri: record.uri,
      cid: record.cid,
      author: { did: author.did, handle: author.handle, ...(author.displayName ? { displayName: author.displayName } : {}) },
      record: record.value,
      ...(images.length
        ? {
            embed: {
              $type: 'app.bsky.embed.images#view',
              images: images.map((image) => ({
                thumb: `${origin()}/img/feed_thumbnail/plain/${record.did}/${image.image.ref.$link}@jpeg`,
                fullsize: `${origin()}/img/feed_fullsize/plain/${record.did}/${image.image.ref.$link}@jpeg`,
                alt: image.alt,
              })),
            },
          }
        : {}),
      replyCount: repliesTo(record.uri).length,
      repostCount: 0,
      likeCount: record.likeCount,
      quoteCount: 0,
      indexedAt: record.indexedAt,
    };
  }

  function repliesTo(uri: string): BlueskyStoredRecord[] {
    return [...records.values()].filter((r) => r.collection === POST && r.value.reply?.parent?.uri === uri);
  }

  /** Replies the AppView shows only as `notFoundPost` / `blockedPost` (app.bsky.feed.defs): the uri, nothing below. */
  const unshown = new Map<string, 'notFound' | 'blocked'>();
  function threadView(record: BlueskyStoredRecord, depth: number): unknown {
    const as = unshown.get(record.uri);
    if (as === 'notFound') return { $type: 'app.bsky.feed.defs#notFoundPost', uri: record.uri, notFound: true };
    if (as === 'blocked') return { $type: 'app.bsky.feed.defs#blockedPost', uri: record.uri, blocked: true, author: { did: record.did, viewer: { blockedBy: true } } };
    return {
      $type: 'app.bsky.feed.defs#threadViewPost',
      post: postView(record),
      ...(depth > 0 ? { replies: repliesTo(record.uri).map((r) => threadView(r, depth - 1)) } : {}),
    };
  }

  standIn
    .on('POST', '/xrpc/com.atproto.server.createSession', (req) => {
      const { identifier, password } = req.json ?? {};
      if (typeof identifier !== 'string' || typeof password !== 'string') {
        xrpcError(400, 'InvalidRequest', 'Input must have the property "identifier"');
      }
      const account = accountBy(identifier);
      if (!account || account.appPassword !== password) xrpcError(401, 'AuthenticationRequired', 'Invalid identifier or password');
      return ok(sessionBody(account));
    })
    .on('POST', '/xrpc/com.atproto.server.refreshSession', (req) => {
      const account = authenticate(req, 'refresh');
      const { accessJwt, refreshJwt, handle, did, didDoc: doc, active } = sessionBody(account);
      return ok({ accessJwt, refreshJwt, handle, did, didDoc: doc, active });
    })
    .on('GET', '/xrpc/com.atproto.server.getSession', (req) => {
      const account = authenticate(req);
      return ok({ handle: account.handle, did: account.did, email: `${account.handle.split('.')[0]}@example.com`, emailConfirmed: true, active: true, didDoc: didDoc(account) });
    })
    .on('GET', '/xrpc/com.atproto.identity.resolveHandle', (req) => {
      const account = accountBy(req.query.handle ?? '');
      if (!account) xrpcError(400, 'InvalidRequest', 'Unable to resolve handle');
      return ok({ did: account.did });
    })
    .on('POST', '/xrpc/com.atproto.repo.uploadBlob', (req) => {
      const account = authenticate(req);
      if (req.body.length > MAX_UPLOAD_BYTES) xrpcError(413, 'PayloadTooLarge', 'request entity too large');
      const mimeType = sniffImage(req.body) ?? String(req.headers['content-type'] ?? 'application/octet-stream');
      const cid = cidOf(req.body, 0x55);
      blobs.set(cid, { did: account.did, mimeType, size: req.body.length });
      return ok({ blob: { $type: 'blob', ref: { $link: cid }, mimeType, size: req.body.length } });
    })
    .on('POST', '/xrpc/com.atproto.repo.createRecord', (req) => {
      const account = authenticate(req);
      const { repo, collection, rkey, record } = req.json ?? {};
      if (repo !== account.did && repo !== account.handle) xrpcError(401, 'AuthenticationRequired', 'Authentication Required');
      if (collection !== POST) xrpcError(400, 'InvalidRequest', `Unsupported collection in this stand-in: ${collection}`);
      if (record?.$type !== collection) xrpcError(400, 'InvalidRequest', `Invalid $type: expected ${collection}, got ${record?.$type}`);
      if (rkey !== undefined && !TID.test(rkey)) xrpcError(400, 'InvalidRequest', `Invalid record key: ${rkey}: Invalid TID string`);
      validatePost(account.did, record);
      const key = rkey ?? nextTid();
      // A real PDS hits a unique constraint and answers a bare 500; the first record stays unchanged.
      if (records.has(`at://${account.did}/${collection}/${key}`)) xrpcError(500, 'InternalServerError', 'Internal Server Error');
      const stored = putRecord(account.did, collection, key, record);
      return ok({ uri: stored.uri, cid: stored.cid, commit: commit(), validationStatus: 'valid' });
    })
    .on('POST', '/xrpc/com.atproto.repo.deleteRecord', (req) => {
      const account = authenticate(req);
      const { repo, collection, rkey } = req.json ?? {};
      if (repo !== account.did && repo !== account.handle) xrpcError(401, 'AuthenticationRequired', 'Authentication Required');
      const uri = `at://${account.did}/${collection}/${rkey}`;
      if (!records.has(uri)) return ok({});
      records.delete(uri);
      return ok({ commit: commit() });
    })
    .on('GET', '/xrpc/com.atproto.repo.getRecord', (req) => {
      const account = accountBy(req.query.repo ?? '');
      if (!account) xrpcError(400, 'InvalidRequest', `Could not find repo: ${req.query.repo}`);
      const uri = `at://${account.did}/${req.query.collection}/${req.query.rkey}`;
      const record = records.get(uri);
      if (!record) xrpcError(400, 'RecordNotFound', `Could not locate record: ${uri}`);
      return ok({ uri: record.uri, cid: record.cid, value: record.value });
    })
    .on('GET', '/xrpc/app.bsky.feed.getPosts', (req) => {
      authenticate(req);
      // The kit keeps one value per query name, so this stand-in reads one uri; a missing post is left out of `posts`.
      const record = records.get(req.query.uris ?? '');
      if (!record) return ok({ posts: [] });
      const view = postView(record);
      const m = metrics.get(record.uri);
      const counts = { replyCount: m.replies ?? view.replyCount, repostCount: m.reposts ?? 0, likeCount: m.likes ?? view.likeCount, quoteCount: m.quotes ?? 0 };
      // `bookmarkCount` only from AppViews on newer lexicons: reported here once a test sets it.
      return ok({ posts: [{ ...view, ...counts, ...(m.bookmarks === undefined ? {} : { bookmarkCount: m.bookmarks }) }] });
    })
    .on('GET', '/xrpc/app.bsky.feed.getPostThread', (req) => {
      authenticate(req);
      const depth = req.query.depth === undefined ? 6 : Number(req.query.depth);
      if (!Number.isInteger(depth) || depth < 0 || depth > 1000) xrpcError(400, 'InvalidRequest', 'Error: Params must have the property "depth" in range 0..1000');
      const match = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(req.query.uri ?? '');
      const account = match ? accountBy(match[1]) : undefined;
      const record = match && account ? records.get(`at://${account.did}/${match[2]}/${match[3]}`) : undefined;
      if (!record) xrpcError(400, 'NotFound', `Post not found: ${req.query.uri}`);
      return ok({ thread: threadView(record, depth) });
    });

  const metrics = new MetricsBook();

  await standIn.start();
  if (options.demoAccount) addAccount({ handle: 'demo.herald.test', appPassword: 'demo-demo-demo-demo', displayName: 'Herald Demo' });

  return {
    standIn,
    origin: standIn.origin,
    addAccount,
    /** Posts (app.bsky.feed.post records) of one account, oldest first. */
    posts(did: string): BlueskyStoredRecord[] {
      return [...records.values()].filter((r) => r.did === did && r.collection === POST);
    },
    record(uri: string): BlueskyStoredRecord | undefined {
      return records.get(uri);
    },
    /**
     * Another account replies to `parentUri` (root taken from the parent, as clients do). `createdAt` is what the
     * author's client writes in the record; the AppView's `indexedAt` is when it saw the reply, so a reply dated in the
     * past was indexed then, and one dated ahead is indexed now (set `indexedAt` on the result for a backdated record).
     */
    reply(parentUri: string, author: BlueskyStandInAccount, text: string, createdAt = new Date()): BlueskyStoredRecord {
      const parent = records.get(parentUri);
      if (!parent) throw new Error(`no record ${parentUri}`);
      const parentRef = { uri: parent.uri, cid: parent.cid };
      const root = parent.value.reply?.root ?? parentRef;
      const record = putRecord(author.did, POST, nextTid(), { $type: POST, text, createdAt: createdAt.toISOString(), reply: { root, parent: parentRef } });
      record.indexedAt = new Date(Math.min(createdAt.getTime(), Date.now())).toISOString();
      return record;
    },
    /**
     * The AppView answers this reply in getPostThread as `#notFoundPost` or `#blockedPost` (a block between the
     * accounts, a post it cannot hydrate): its uri only, no content and no replies under it; `undefined` shows it again.
     */
    showAs(uri: string, as: 'notFound' | 'blocked' | undefined): void {
      if (as) unshown.set(uri, as);
      else unshown.delete(uri);
    },
    /** Removes a record as if its author deleted it on Bluesky. */
    remove(uri: string): void {
      records.delete(uri);
    },
    /** Numbers `app.bsky.feed.getPosts` reports for a post, in Herald's keys. */
    setMetrics: (uri: string, values: Parameters<MetricsBook['set']>[1]) => metrics.set(uri, values),
    setLikes(uri: string, likes: number): void {
      records.get(uri)!.likeCount = likes;
    },
    /** Every access token issued so far answers 400 ExpiredToken (a refresh token still works). */
    expireAccessTokens(): void {
      for (const token of tokens.values()) if (token.kind === 'access') token.expired = true;
    },
    /** Every token issued so far is refused (as after the user revoked the app password's sessions). */
    revokeSessions(): void {
      for (const token of tokens.values()) token.expired = true;
    },
    changeAppPassword(did: string, appPassword: string): void {
      accounts.get(did)!.appPassword = appPassword;
      for (const token of tokens.values()) if (token.did === did) token.expired = true;
    },
    stop: () => standIn.stop(),
  };
}

export type BlueskyStandIn = Awaited<ReturnType<typeof startBlueskyStandIn>>;
