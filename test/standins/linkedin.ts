/**
 * LinkedIn REST stand-in (protocols.md section 8): OpenID userinfo, organization ACLs and lookup, the Images API
 * (initializeUpload → PUT to the absolute `uploadUrl` it returns), Posts (201 + `x-restli-id`, finder by author, read
 * by URN, idempotent 204 delete, 422 DUPLICATE_POST naming the post repeated), and socialActions comments with
 * start/count paging. Every /rest call needs `LinkedIn-Version`; errors use LinkedIn's
 * `{ status, serviceErrorCode, code, message }` body.
 *
 * A post has an activity besides its share URN, and its comments are named by the activity:
 * `urn:li:comment:(urn:li:activity:<id>,<comment id>)`, `object` the activity URN (protocols.md "Read comments"). A
 * comment create answers 201 with `x-restli-id: <comment id>` and the created comment in the body
 * (`commentCreateAnswer.entity`; off, the body is empty). Comment paths name the post by its share URN.
 */
import { randomBytes } from 'node:crypto';
import { StandIn, StandInReply, type RecordedRequest, type StandInResponse } from './kit';
import { MetricsBook } from './metrics';
import { TokenBook } from './tokens';

interface LinkedInPost { urn: string; activity: string; author: string; commentary: string; content?: any; createdAt: number; body: any }
/** `object`: the share URN of the post the comment is on (what paths name); its view shows the activity URN instead. */
interface LinkedInCommentRecord { id: string; commentUrn: string; object: string; activity: string; actor: string; text: string; parentComment?: string; time: number }

export function linkedInError(status: number, message: string, code?: string, serviceErrorCode?: number): StandInResponse {
  return { status, json: { status, ...(serviceErrorCode !== undefined ? { serviceErrorCode } : {}), ...(code ? { code } : {}), message } };
}

/** LinkedIn's 422 to a repeated create, as quoted from LinkedIn in client issues (Arisamiga/Linkedin-RSS#5; protocols.md section 8). */
export function linkedInDuplicate(urn: string): StandInResponse {
  return {
    status: 422,
    json: {
      errorDetailType: 'com.linkedin.common.error.BadRequest',
      message: `com.linkedin.content.common.exception.BadRequestResponseException: Content is a duplicate of ${urn}`,
      errorDetails: { inputErrors: [{ description: 'Duplicate post is detected', input: {}, code: 'DUPLICATE_POST' }] },
      status: 422,
    },
  };
}

export async function startLinkedInStandIn() {
  const standIn = new StandIn('linkedin');
  const member = { sub: 'm8Xy2bQ', name: 'Ada Lovelace', token: 'li-token-1' };
  const organization = { id: 2414183, localizedName: 'Herald Inc', vanityName: 'herald-inc', role: 'ADMINISTRATOR' };
  const images = new Map<string, { urn: string; owner: string; uploadToken: string; bytes?: Buffer; contentType?: string }>();
  const posts = new Map<string, LinkedInPost>();
  const comments = new Map<string, LinkedInCommentRecord>();
  /**
   * `keepDeleted`: a deleted post's text is still refused as a duplicate, naming the deleted post (which reads 404), as
   * reported of LinkedIn for a day or two after a delete (ComposioHQ/composio#2710, [3p]); off unless a test asks.
   */
  const duplicates = { keepDeleted: false, deleted: new Map<string, LinkedInPost>() };
  const commentCreateAnswer = { entity: true };
  let counter = 7_100_000_000_000_000_000n;
  let clock = () => new Date();
  const nextId = () => String((counter += 1n));
  const personUrn = () => `urn:li:person:${member.sub}`;
  const orgUrn = () => `urn:li:organization:${organization.id}`;

  /**
   * Programmatic refresh (protocols.md section 13): `POST /oauth/v2/accessToken` with the app's id and secret mints a
   * new 60-day access token for a known refresh token (the same refresh token comes back). `member.token` as given
   * never ends; tokens from `tokens` end (401 EXPIRED_ACCESS_TOKEN 65602).
   */
  const tokens = new TokenBook('li-token', 60 * 86_400);
  const oauth = { app: { clientId: 'li-client', clientSecret: 'li-secret' }, refreshTokens: new Set<string>() };
  const oauthError = (error: string, description: string) => ({ status: 400, json: { error, error_description: description } });
  standIn.on('POST', '/oauth/v2/accessToken', (req) => {
    const form = req.form ?? {};
    if (!form.refresh_token) return oauthError('invalid_request', 'A required parameter "refresh_token" is missing');
    if (form.client_id !== oauth.app.clientId || form.client_secret !== oauth.app.clientSecret) {
      tokens.renewals.push({ token: form.refresh_token, outcome: 'refused' });
      return { status: 401, json: { error: 'invalid_client', error_description: 'Client authentication failed' } };
    }
    if (form.grant_type !== 'refresh_token' || !oauth.refreshTokens.has(form.refresh_token)) {
      tokens.renewals.push({ token: form.refresh_token, outcome: 'refused' });
      return oauthError('invalid_request', 'The provided authorization grant or refresh token is invalid, expired or revoked');
    }
    const accessToken = tokens.issue(req.now);
    member.token = accessToken;
    tokens.renewals.push({ token: form.refresh_token, outcome: 'renewed' });
    return { json: { access_token: accessToken, expires_in: tokens.lifetimeS, refresh_token: form.refresh_token, refresh_token_expires_in: 365 * 86_400 } };
  });

  function auth(req: RecordedRequest): void {
    const bearer = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (tokens.stateOf(bearer, req.now) === 'ended') throw new StandInReply(linkedInError(401, 'The token used in the request has expired', 'EXPIRED_ACCESS_TOKEN', 65602));
    if (bearer !== member.token && tokens.stateOf(bearer, req.now) !== 'live') throw new StandInReply(linkedInError(401, 'Invalid access token', 'INVALID_ACCESS_TOKEN', 65600));
    if (req.path.startsWith('/rest/') && !/^\d{6}$/.test(String(req.headers['linkedin-version'] ?? ''))) {
      throw new StandInReply(linkedInError(426, `Requested version ${req.headers['linkedin-version'] ?? '(none)'} is not active`, 'NONEXISTENT_VERSION'));
    }
  }
  const mayActAs = (urn: string) => urn === personUrn() || (urn === orgUrn() && ['ADMINISTRATOR', 'DIRECT_SPONSORED_CONTENT_POSTER', 'CONTENT_ADMINISTRATOR'].includes(organization.role));

  const commentView = (c: LinkedInCommentRecord) => {
    const replies = [...comments.values()].filter((r) => r.parentComment === c.commentUrn).length;
    return {
      id: c.id, commentUrn: c.commentUrn, actor: c.actor, object: c.activity, message: { text: c.text, attributes: [] }, ...(c.parentComment ? { parentComment: c.parentComment } : {}),
      created: { actor: c.actor, time: c.time }, lastModified: { actor: c.actor, time: c.time }, likesSummary: { totalLikes: 0, likedByCurrentUser: false },
      commentsSummary: { aggregatedTotalComments: replies, totalFirstLevelComments: replies },
    };
  };

  standIn.on('GET', '/v2/userinfo', (req) => {
    auth(req);
    return { json: { sub: member.sub, name: member.name, given_name: 'Ada', family_name: 'Lovelace', picture: 'https://media.licdn.example/ada.jpg', locale: { country: 'GB', language: 'en' } } };
  });

  standIn.on('GET', '/rest/organizationAcls', (req) => {
    auth(req);
    if (req.query.q !== 'roleAssignee') return linkedInError(400, 'Unknown finder');
    return { json: { paging: { start: 0, count: 100, total: 1 }, elements: [{ organization: orgUrn(), role: organization.role, state: 'APPROVED', roleAssignee: personUrn() }] } };
  });

  standIn.on('GET', '/rest/organizations/:id', (req) => {
    auth(req);
    if (req.params.id !== String(organization.id)) return linkedInError(404, 'Not Found');
    return { json: { id: organization.id, localizedName: organization.localizedName, vanityName: organization.vanityName } };
  });

  standIn.on('POST', '/rest/images', (req) => {
    auth(req);
    if (req.query.action !== 'initializeUpload') return linkedInError(400, 'Unknown action');
    const owner = req.json?.initializeUploadRequest?.owner;
    if (!owner || !mayActAs(owner)) return linkedInError(403, `Not enough permissions to access: images.action.initializeUpload for ${owner}`, 'ACCESS_DENIED', 100);
    const urn = `urn:li:image:D4E${randomBytes(6).toString('hex')}`;
    const uploadToken = randomBytes(12).toString('hex');
    images.set(urn, { urn, owner, uploadToken });
    return { json: { value: { uploadUrlExpiresAt: clock().getTime() + 86_400_000, uploadUrl: `${standIn.origin}/dms-uploads/${uploadToken}/uploadedImage/0`, image: urn } } };
  });

  standIn.on('PUT', '/dms-uploads/:token/uploadedImage/0', (req) => {
    const image = [...images.values()].find((i) => i.uploadToken === req.params.token);
    if (!image) return { status: 404, text: 'not found' };
    if (req.headers.authorization !== `Bearer ${member.token}`) return { status: 401, text: 'unauthorized' };
    image.bytes = req.body;
    image.contentType = String(req.headers['content-type'] ?? '');
    return { status: 201 };
  });

  standIn.on('POST', '/rest/posts', (req) => {
    auth(req);
    const body = req.json ?? {};
    if (!mayActAs(body.author)) return linkedInError(403, `Not enough permissions to access: partnerApiPostsExternal.CREATE for ${body.author}`, 'ACCESS_DENIED', 100);
    if (typeof body.commentary !== 'string' || body.commentary.length > 3000) return linkedInError(422, '/commentary :: length must be at most 3000', 'UNPROCESSABLE_ENTITY');
    const refs: string[] = body.content?.media ? [body.content.media.id] : (body.content?.multiImage?.images ?? []).map((i: { id: string }) => i.id);
    if (refs.some((urn) => !images.get(urn)?.bytes)) return linkedInError(400, 'Image is not uploaded or not available');
    const known = [...posts.values(), ...(duplicates.keepDeleted ? duplicates.deleted.values() : [])];
    const duplicate = known.find((p) => p.author === body.author && p.commentary === body.commentary && body.commentary !== '');
    if (duplicate) return linkedInDuplicate(duplicate.urn);
    const post: LinkedInPost = {
      urn: `urn:li:share:${nextId()}`, activity: `urn:li:activity:${nextId()}`, author: body.author, commentary: body.commentary, content: body.content, createdAt: clock().getTime(), body,
    };
    posts.set(post.urn, post);
    return { status: 201, headers: { 'x-restli-id': post.urn } };
  });

  standIn.on('GET', '/rest/posts', (req) => {
    auth(req);
    if (req.query.q !== 'author' || !req.query.author) return linkedInError(400, 'author finder needs author');
    // A member author needs the restricted r_member_social (protocols.md section 12), which Herald's app is not granted;
    // an organization author needs a role on the Page.
    if (!req.query.author.startsWith('urn:li:organization:') || !mayActAs(req.query.author)) {
      return linkedInError(403, `Not enough permissions to access: partnerApiPostsExternal.FINDER-author for ${req.query.author}`, 'ACCESS_DENIED', 100);
    }
    const count = Number(req.query.count ?? 10);
    const list = [...posts.values()].filter((p) => p.author === req.query.author).reverse().slice(0, count);
    return { json: { paging: { start: 0, count, links: [] }, elements: list.map((p) => ({ id: p.urn, author: p.author, commentary: p.commentary, createdAt: p.createdAt, lifecycleState: 'PUBLISHED' })) } };
  });

  /** A single post by URN: as the finder, a member's needs the restricted `r_member_social`, a Page's a role on it. */
  standIn.on('GET', '/rest/posts/:urn', (req) => {
    auth(req);
    const post = posts.get(req.params.urn);
    if (!post) return linkedInError(404, `Post ${req.params.urn} not found`);
    if (!post.author.startsWith('urn:li:organization:') || !mayActAs(post.author)) {
      return linkedInError(403, `Not enough permissions to access: partnerApiPostsExternal.GET for ${req.params.urn}`, 'ACCESS_DENIED', 100);
    }
    return { json: { id: post.urn, author: post.author, commentary: post.commentary, createdAt: post.createdAt, lastModifiedAt: post.createdAt, lifecycleState: 'PUBLISHED', visibility: 'PUBLIC' } };
  });

  standIn.on('DELETE', '/rest/posts/:urn', (req) => {
    auth(req);
    // Deletes are idempotent: a post already gone answers 204 as well.
    const gone = posts.get(req.params.urn);
    if (gone) duplicates.deleted.set(gone.urn, gone);
    posts.delete(req.params.urn);
    for (const c of [...comments.values()]) if (c.object === req.params.urn) comments.delete(c.id);
    return { status: 204 };
  });

  standIn.on('GET', '/rest/socialActions/:urn/comments', (req) => {
    auth(req);
    const target = req.params.urn;
    const list = [...comments.values()].filter((c) => (target.startsWith('urn:li:comment:') ? c.parentComment === target : c.object === target && !c.parentComment));
    const start = Number(req.query.start ?? 0);
    const count = Number(req.query.count ?? 10);
    return { json: { paging: { start, count, total: list.length, links: [] }, elements: list.slice(start, start + count).map(commentView) } };
  });

  standIn.on('POST', '/rest/socialActions/:urn/comments', (req) => {
    auth(req);
    const body = req.json ?? {};
    if (!mayActAs(body.actor)) return linkedInError(403, 'Not enough permissions to comment as this actor', 'ACCESS_DENIED', 100);
    if (!posts.has(body.object)) return linkedInError(404, `Post ${body.object} not found`);
    if (body.parentComment && ![...comments.values()].some((c) => c.commentUrn === body.parentComment)) return linkedInError(404, 'Parent comment not found');
    return { status: 201, ...created(addComment(body.object, body.actor, body.message?.text ?? '', body.parentComment)) };
  });

  /** "Get a Comment": the post (share URN) or parent comment the path names must be the comment's. */
  standIn.on('GET', '/rest/socialActions/:urn/comments/:id', (req) => {
    auth(req);
    const comment = comments.get(req.params.id);
    if (!comment || (comment.object !== req.params.urn && comment.parentComment !== req.params.urn)) return linkedInError(404, 'Comment not found');
    return { json: commentView(comment) };
  });

  function created(c: LinkedInCommentRecord) {
    return { headers: { 'x-restli-id': c.id }, ...(commentCreateAnswer.entity ? { json: commentView(c) } : {}) };
  }

  function addComment(object: string, actor: string, text: string, parentComment?: string): LinkedInCommentRecord {
    const id = nextId();
    const activity = posts.get(object)?.activity ?? `urn:li:activity:${object.split(':').pop()}`;
    const record: LinkedInCommentRecord = { id, commentUrn: `urn:li:comment:(${activity},${id})`, object, activity, actor, text, parentComment, time: clock().getTime() };
    comments.set(id, record);
    return record;
  }

  standIn.on('DELETE', '/rest/socialActions/:urn/comments/:id', (req) => {
    auth(req);
    const comment = comments.get(req.params.id);
    if (!comment || comment.object !== req.params.urn) return linkedInError(404, 'Comment not found');
    if (comment.actor !== req.query.actor || !mayActAs(comment.actor)) return linkedInError(403, 'Only the author can delete this comment', 'ACCESS_DENIED', 100);
    for (const c of [...comments.values()]) if (c.id === comment.id || c.parentComment === comment.commentUrn) comments.delete(c.id);
    return { status: 204 };
  });

  const metrics = new MetricsBook();
  /** `r_member_postAnalytics` granted to the member's connection (Community Management API). */
  const memberAnalytics = { granted: true };
  const listed = /^List\((urn:li:(?:share|ugcPost):\d+)\)$/;

  /** Page post statistics (protocols.md section 12): organic totals of the posts named in `shares=List(...)`. */
  standIn.on('GET', '/rest/organizationalEntityShareStatistics', (req) => {
    auth(req);
    if (req.query.q !== 'organizationalEntity') return linkedInError(400, 'Unknown finder');
    if (req.query.organizationalEntity !== orgUrn()) return linkedInError(403, 'Not enough permissions to access organizationalEntityShareStatistics', 'ACCESS_DENIED', 100);
    if (organization.role !== 'ADMINISTRATOR') return linkedInError(403, 'Member is not an administrator of the organization', 'ACCESS_DENIED', 100);
    const urn = listed.exec(req.query.shares ?? req.query.ugcPosts ?? '')?.[1];
    const post = urn ? posts.get(urn) : undefined;
    if (!urn || !post || post.author !== orgUrn()) return { json: { paging: { start: 0, count: 10, links: [] }, elements: [] } };
    const m = metrics.get(urn);
    const totalShareStatistics = {
      impressionCount: m.impressions ?? 0, uniqueImpressionsCount: m.reach ?? 0, clickCount: m.clicks ?? 0, likeCount: m.likes ?? 0,
      commentCount: m.replies ?? [...comments.values()].filter((c) => c.object === urn).length, shareCount: m.reposts ?? 0, engagement: 0,
    };
    return { json: { paging: { start: 0, count: 10, links: [] }, elements: [{ organizationalEntity: orgUrn(), [urn.includes(':share:') ? 'share' : 'ugcPost']: urn, totalShareStatistics }] } };
  });

  /** Member post analytics: one metric type per call, `aggregation=TOTAL` gives one element. */
  const memberMetric: Record<string, keyof ReturnType<MetricsBook['get']>> = { IMPRESSION: 'impressions', MEMBERS_REACHED: 'reach', REACTION: 'likes', COMMENT: 'replies', RESHARE: 'reposts' };
  standIn.on('GET', '/rest/memberCreatorPostAnalytics', (req) => {
    auth(req);
    if (req.query.q !== 'entity') return linkedInError(400, 'Unknown finder');
    if (!memberAnalytics.granted) return linkedInError(403, 'Not enough permissions to access: memberCreatorPostAnalytics', 'ACCESS_DENIED', 100);
    const urn = /^\((?:share|ugc):(urn:li:(?:share|ugcPost):\d+)\)$/.exec(req.query.entity ?? '')?.[1];
    const key = memberMetric[req.query.queryType ?? ''];
    if (!urn || !key || !['TOTAL', 'DAILY'].includes(req.query.aggregation ?? '')) return linkedInError(400, 'Invalid query parameters');
    const post = posts.get(urn);
    if (!post || post.author !== personUrn()) return linkedInError(404, 'Not Found');
    const count = metrics.get(urn)[key] ?? 0;
    return { json: { paging: { start: 0, count: 10, links: [] }, elements: [{ count, metricType: { 'com.linkedin.adsexternalapi.memberanalytics.v1.CreatorPostAnalyticsMetricTypeV1': req.query.queryType } }] } };
  });

  const origin = await standIn.start();
  return {
    standIn, origin, member, organization, images, posts, comments, personUrn, orgUrn, tokens, oauth, duplicates, commentCreateAnswer,
    setClock(fn: () => Date) { clock = fn; },
    /** Numbers the statistics endpoints report for a post, in Herald's keys. */
    setMetrics: (urn: string, values: Parameters<MetricsBook['set']>[1]) => metrics.set(urn, values),
    memberAnalytics,
    addExternalComment(object: string, text: string, parentComment?: string, actor = 'urn:li:person:visitor1') {
      return addComment(object, actor, text, parentComment);
    },
    stop: () => standIn.stop(),
  };
}
