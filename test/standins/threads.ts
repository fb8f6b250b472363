/**
 * Threads API stand-in (protocols.md section 7): `/me`, containers (`/{user}/threads`) that turn FINISHED after a
 * configurable number of status reads, `threads_publish` with the 250 posts / 1,000 replies per 24 h quotas,
 * `permalink`, reply chains through `reply_to_id`, `/replies` and `/conversation` with cursors, `manage_reply`,
 * and DELETE that needs the `threads_delete` permission.
 */
import { StandIn, StandInReply, type RecordedRequest } from './kit';
import { graphInsightsAnswer, MetricsBook } from './metrics';
import { cursorPage, fieldNames, graphError, graphErrors, nextGraphId, param, pick, requireToken } from './graph';
import { graphTokenRenewal, TokenBook } from './tokens';

interface ThreadsContainer { id: string; fields: Record<string, string>; status: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED'; pollsLeft: number; errorMessage?: string }
interface ThreadsPost {
  id: string; text?: string; mediaType: string; replyToId: string | null; rootId: string; username: string; own: boolean; timestamp: string;
  shortcode: string; hidden: boolean; containerId?: string; imageUrl?: string;
}

const clusters = new Intl.Segmenter('en', { granularity: 'grapheme' });
const emojiCluster = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u;

/** Threads' count (protocols.md section 7): characters, "emojis are counted as the number of UTF-8 bytes". */
function threadsTextLength(text: string): number {
  let length = 0;
  for (const { segment } of clusters.segment(text)) length += emojiCluster.test(segment) ? Buffer.byteLength(segment, 'utf8') : [...segment].length;
  return length;
}

export async function startThreadsStandIn(opts: { processingPolls?: number } = {}) {
  const standIn = new StandIn('threads');
  const user = { id: '25000000000000001', username: 'herald.threads', name: 'Herald Threads', token: 'threads-token-1', canDelete: true, canManageReplies: true };
  const containers = new Map<string, ThreadsContainer>();
  const posts = new Map<string, ThreadsPost>();
  const quota = { posts: 0, postTotal: 250, replies: 0, replyTotal: 1000 };
  const failingUrls = new Map<string, string>();
  // `withholdPermalinks`: posts answered without a link (as Threads may); `permalinkFailures`: the next reads of a link fail.
  const state = { processingPolls: opts.processingPolls ?? 0, withholdPermalinks: false, permalinkFailures: 0 };
  let clock = () => new Date();
  const v = '/v1.0';
  // Long-lived tokens (protocols.md section 13): `user.token` as given never ends; tokens from `tokens` end and renew.
  const tokens = new TokenBook('threads-token', 60 * 86_400);
  const auth = (req: RecordedRequest) => {
    if (tokens.stateOf(param(req, 'access_token') ?? '', req.now) === 'ended') throw new StandInReply(graphErrors.expiredToken());
    return requireToken(req, (t) => t === user.token || tokens.stateOf(t, req.now) === 'live');
  };
  const renew = graphTokenRenewal(tokens, 'th_refresh_token', user);
  standIn.on('GET', '/refresh_access_token', renew);
  standIn.on('GET', `${v}/refresh_access_token`, renew);
  const userOf = (req: RecordedRequest) => {
    const id = req.params.userId;
    if (id !== 'me' && id !== user.id) throw new StandInReply(graphErrors.unknownObject(id));
  };
  const permalink = (p: ThreadsPost) => `https://www.threads.com/@${p.username}/post/${p.shortcode}`;
  const view = (p: ThreadsPost) => ({
    id: p.id, text: p.text, username: p.username, timestamp: p.timestamp.replace(/\.\d{3}Z$/, '+0000'), media_type: p.mediaType, shortcode: p.shortcode,
    permalink: state.withholdPermalinks ? undefined : permalink(p), is_reply: p.replyToId !== null, replied_to: p.replyToId ? { id: p.replyToId } : undefined,
    root_post: { id: p.rootId }, is_reply_owned_by_me: p.own, hide_status: p.hidden ? 'HIDDEN' : 'NOT_HUSHED',
    has_replies: [...posts.values()].some((r) => r.replyToId === p.id),
  });

  function addPost(fields: { text?: string; mediaType: string; replyToId?: string; imageUrl?: string }, author: { username: string; own: boolean }): ThreadsPost {
    const parent = fields.replyToId ? posts.get(fields.replyToId) : undefined;
    if (fields.replyToId && !parent) throw new StandInReply(graphErrors.invalidParameter(`(#100) reply_to_id ${fields.replyToId} does not exist`));
    const id = nextGraphId();
    const post: ThreadsPost = {
      id, text: fields.text, mediaType: fields.mediaType, replyToId: fields.replyToId ?? null, rootId: parent ? parent.rootId : id, username: author.username, own: author.own,
      timestamp: clock().toISOString(), shortcode: `D${id.slice(-9)}`, hidden: false, imageUrl: fields.imageUrl,
    };
    posts.set(id, post);
    return post;
  }

  standIn.on('GET', `${v}/me`, (req) => {
    auth(req);
    return { json: pick({ id: user.id, username: user.username, name: user.name, threads_profile_picture_url: 'https://cdn.threads.example/p.jpg' }, req.query.fields) };
  });

  standIn.on('POST', `${v}/:userId/threads`, (req) => {
    auth(req);
    userOf(req);
    const fields = { ...req.form! };
    delete fields.access_token;
    const type = fields.media_type;
    if (!['TEXT', 'IMAGE', 'VIDEO', 'CAROUSEL'].includes(type)) return graphErrors.invalidParameter('(#100) media_type must be TEXT, IMAGE, VIDEO or CAROUSEL');
    if (type === 'TEXT' && !fields.text) return graphErrors.invalidParameter('(#100) text is required for TEXT posts');
    if (threadsTextLength(fields.text ?? '') > 500) return graphErrors.invalidParameter('(#100) The text is longer than 500 characters');
    if (type === 'IMAGE' && !fields.image_url) return graphErrors.invalidParameter('(#100) image_url is required');
    if (type === 'CAROUSEL' && (fields.children ?? '').split(',').some((id) => containers.get(id)?.fields.is_carousel_item !== 'true')) {
      return graphErrors.invalidParameter('(#100) children must be carousel item containers');
    }
    if (fields.reply_to_id && !posts.has(fields.reply_to_id)) return graphErrors.invalidParameter(`(#100) reply_to_id ${fields.reply_to_id} does not exist`);
    const url = fields.image_url ?? fields.video_url;
    const error = url ? failingUrls.get(url) : undefined;
    const container: ThreadsContainer = {
      id: nextGraphId(), fields, status: error ? 'ERROR' : type === 'TEXT' ? 'FINISHED' : 'IN_PROGRESS', pollsLeft: state.processingPolls, errorMessage: error,
    };
    containers.set(container.id, container);
    return { json: { id: container.id } };
  });

  standIn.on('POST', `${v}/:userId/threads_publish`, (req) => {
    auth(req);
    userOf(req);
    const container = containers.get(param(req, 'creation_id') ?? '');
    if (!container) return graphErrors.unknownObject(param(req, 'creation_id') ?? '');
    if (container.status === 'IN_PROGRESS') return graphError({ code: 9007, message: 'The media is not ready to be published' });
    // A container is published once: Meta documents what PUBLISHED means but no answer to publishing it again, so a
    // refusal (code 100) stands for it here; Herald publishes only a container it read FINISHED (graph/containers.ts).
    if (container.status !== 'FINISHED') return graphErrors.invalidParameter(`(#100) The container is ${container.status}`);
    const reply = Boolean(container.fields.reply_to_id);
    if (reply ? quota.replies >= quota.replyTotal : quota.posts >= quota.postTotal) return graphError({ code: 4, message: '(#4) Application request limit reached' });
    if (reply) quota.replies += 1;
    else quota.posts += 1;
    const post = addPost({ text: container.fields.text, mediaType: container.fields.media_type === 'TEXT' ? 'TEXT_POST' : container.fields.media_type, replyToId: container.fields.reply_to_id, imageUrl: container.fields.image_url }, { username: user.username, own: true });
    post.containerId = container.id;
    container.status = 'PUBLISHED';
    return { json: { id: post.id } };
  });

  standIn.on('GET', `${v}/:userId/threads_publishing_limit`, (req) => {
    auth(req);
    userOf(req);
    const entry = { quota_usage: quota.posts, config: { quota_total: quota.postTotal, quota_duration: 86400 }, reply_quota_usage: quota.replies, reply_config: { quota_total: quota.replyTotal, quota_duration: 86400 } };
    const { id: _id, ...picked } = pick(entry, req.query.fields);
    return { json: { data: [picked] } };
  });

  for (const edge of ['threads', 'replies'] as const) {
    standIn.on('GET', `${v}/:userId/${edge}`, (req) => {
      auth(req);
      userOf(req);
      const list = [...posts.values()].filter((p) => p.own && (edge === 'replies' ? p.replyToId !== null : p.replyToId === null)).reverse();
      return cursorPage(req, standIn.origin, list.map(view));
    });
  }

  standIn.on('GET', `${v}/:id`, (req) => {
    auth(req);
    const container = containers.get(req.params.id);
    if (container) {
      if (container.status === 'IN_PROGRESS' && container.pollsLeft-- <= 0) container.status = 'FINISHED';
      return { json: pick({ id: container.id, status: container.status, error_message: container.errorMessage }, req.query.fields) };
    }
    const post = posts.get(req.params.id);
    if (!post) throw new StandInReply(graphErrors.unknownObject(req.params.id));
    if (fieldNames(req.query.fields)?.includes('permalink') && state.permalinkFailures > 0) {
      state.permalinkFailures -= 1;
      return graphErrors.transient();
    }
    return { json: pick(view(post), req.query.fields) };
  });

  for (const edge of ['replies', 'conversation'] as const) {
    standIn.on('GET', `${v}/:id/${edge}`, (req) => {
      auth(req);
      const post = posts.get(req.params.id);
      if (!post) throw new StandInReply(graphErrors.unknownObject(req.params.id));
      let list = [...posts.values()].filter((p) => (edge === 'replies' ? p.replyToId === post.id : p.rootId === post.rootId && p.id !== post.rootId && isBelow(p, post.id)));
      if (req.query.reverse !== 'false') list = list.reverse();
      return cursorPage(req, standIn.origin, list.map(view));
    });
  }

  function isBelow(p: ThreadsPost, ancestorId: string): boolean {
    for (let at = p.replyToId; at; at = posts.get(at)?.replyToId ?? null) if (at === ancestorId) return true;
    return false;
  }

  const metrics = new MetricsBook();
  /** `threads_manage_insights` granted to the connection; without it insights answer Graph's permission error. */
  const insightsAccess = { granted: true };

  /** Media insights (protocols.md section 12), `threads_basic` + `threads_manage_insights`. */
  standIn.on('GET', `${v}/:id/insights`, (req) => {
    auth(req);
    const post = posts.get(req.params.id);
    if (!post) throw new StandInReply(graphErrors.unknownObject(req.params.id));
    if (!insightsAccess.granted) return graphError({ status: 403, code: 10, message: '(#10) Application does not have permission for this action' });
    const m = metrics.get(post.id);
    return graphInsightsAnswer(post.id, req.query.metric, {
      values: { views: m.impressions, likes: m.likes, replies: m.replies, reposts: m.reposts, quotes: m.quotes, shares: m.shares },
      valid: ['views', 'likes', 'replies', 'reposts', 'quotes', 'shares', 'clicks', 'followers_count', 'follower_demographics'],
    });
  });

  standIn.on('POST', `${v}/:id/manage_reply`, (req) => {
    auth(req);
    if (!user.canManageReplies) return graphError({ status: 403, code: 10, message: '(#10) Application does not have permission for this action' });
    const reply = posts.get(req.params.id);
    if (!reply || !reply.replyToId) return graphErrors.unknownObject(req.params.id, 'post');
    if (reply.replyToId !== reply.rootId) return graphErrors.invalidParameter('(#100) Only top-level replies can be hidden');
    const hide = param(req, 'hide');
    if (hide !== 'true' && hide !== 'false') return graphErrors.invalidParameter('(#100) hide must be a boolean');
    reply.hidden = hide === 'true';
    return { json: { success: true } };
  });

  standIn.on('DELETE', `${v}/:id`, (req) => {
    auth(req);
    const post = posts.get(req.params.id);
    if (!post) return graphErrors.unknownObject(req.params.id, 'delete');
    if (!user.canDelete) return graphError({ status: 403, code: 10, message: '(#10) Application does not have permission for this action' });
    if (!post.own) return graphErrors.invalidParameter('(#100) You can only delete your own posts and replies');
    for (const p of [...posts.values()]) if (p.id === post.id || isBelow(p, post.id)) posts.delete(p.id);
    return { json: { success: true, deleted_id: post.id } };
  });

  const origin = await standIn.start();
  return {
    standIn, origin: `${origin}${v}`, user, containers, posts, quota, failingUrls, state, tokens,
    setClock(fn: () => Date) { clock = fn; },
    /** Numbers the media's insights report, in Herald's keys. */
    setMetrics: (id: string, values: Parameters<MetricsBook['set']>[1]) => metrics.set(id, values),
    insightsAccess,
    permalinkOf: permalink,
    /** A reply by another Threads user to a post or reply. */
    addExternalReply(replyToId: string, text: string, username = 'someone.else') {
      return addPost({ text, mediaType: 'TEXT_POST', replyToId }, { username, own: false });
    },
    stop: () => standIn.stop(),
  };
}
