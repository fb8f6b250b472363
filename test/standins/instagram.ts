/**
 * Instagram content-publishing stand-in (protocols.md section 6). One server answers both logins:
 * `<origin>/v25.0` as graph.instagram.com (Instagram user token, `/me` gives `user_id`) and
 * `<origin>/fb/v25.0` as graph.facebook.com (Facebook token, `ig_user_id`, media delete).
 * Containers go IN_PROGRESS → FINISHED after a configurable number of status reads; `media_publish` enforces the
 * 24-hour publishing quota; comments carry nested `replies` pages.
 */
import { StandIn, StandInReply, type RecordedRequest } from './kit';
import { graphInsightsAnswer, MetricsBook } from './metrics';
import { cursorPage, graphError, graphErrors, graphTime, nextGraphId, param, pick, requireToken, fieldNames } from './graph';
import { graphTokenRenewal, TokenBook } from './tokens';

interface InstagramContainer {
  id: string; fields: Record<string, string>; status: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED'; pollsLeft: number; mediaId?: string;
}
interface InstagramMedia {
  id: string; kind: 'feed' | 'story' | 'reel' | 'carousel'; caption?: string; timestamp: string; shortcode: string; permalink?: string;
  containerId: string; children: InstagramContainer[];
}
interface InstagramCommentRecord {
  id: string; mediaId: string; parentId: string | null; text: string; from: { id: string; username: string }; timestamp: string; hidden: boolean; like_count: number;
}

export async function startInstagramStandIn(opts: { processingPolls?: number; nestedReplyPageSize?: number } = {}) {
  const standIn = new StandIn('instagram');
  const user = { igUserId: '17841400000000001', appScopedId: '9100000000000001', username: 'herald.gram', name: 'Herald Gram', igToken: 'ig-token-1', fbToken: 'fb-token-1' };
  const containers = new Map<string, InstagramContainer>();
  const media = new Map<string, InstagramMedia>();
  const comments = new Map<string, InstagramCommentRecord>();
  const quota = { usage: 0, total: 100 };
  const failingUrls = new Set<string>();
  const noPermalink = new Set<string>();
  const state = { processingPolls: opts.processingPolls ?? 0, nestedReplyPageSize: opts.nestedReplyPageSize ?? 25, permalinkFailures: 0 };
  let clock = () => new Date();
  // Replying to, hiding and deleting comments needs instagram_manage_comments (instagram_business_manage_comments).
  const permissions = new Set(['instagram_basic', 'instagram_content_publish', 'instagram_manage_comments']);
  const requireManageComments = () => {
    if (!permissions.has('instagram_manage_comments')) throw new StandInReply(graphErrors.permission());
  };

  const replyView = (c: InstagramCommentRecord) => ({ id: c.id, text: c.text, timestamp: c.timestamp, username: c.from.username, from: c.from, like_count: c.like_count, hidden: c.hidden });
  function commentView(c: InstagramCommentRecord, req: RecordedRequest) {
    const view: Record<string, unknown> = replyView(c);
    if (fieldNames(req.query.fields)?.includes('replies')) {
      const replies = [...comments.values()].filter((r) => r.parentId === c.id);
      const first = replies.slice(0, state.nestedReplyPageSize);
      const after = Buffer.from(`cursor:${first.length}`).toString('base64url');
      view.replies = { data: first.map(replyView), ...(replies.length > first.length ? { paging: { cursors: { after }, next: `${standIn.origin}/next` } } : {}) };
    }
    return view;
  }

  function addComment(target: string, text: string, from: { id: string; username: string }): InstagramCommentRecord {
    const parent = comments.get(target);
    const mediaId = parent ? parent.mediaId : target;
    if (!media.has(mediaId)) throw new StandInReply(graphErrors.unknownObject(target, 'post'));
    if (parent?.hidden) throw new StandInReply(graphErrors.invalidParameter('(#100) Cannot reply to a hidden comment'));
    const record: InstagramCommentRecord = {
      id: nextGraphId(), mediaId, parentId: parent ? (parent.parentId ?? parent.id) : null, text, from, timestamp: graphTime(clock()), hidden: false, like_count: 0,
    };
    comments.set(record.id, record);
    return record;
  }

  /**
   * Media insights by product type (Instagram Media Insights reference, "media product type" of each metric): stories
   * have no likes, comments or saved; feed posts and reels have no replies or navigation.
   */
  const insightsOfProductType: Record<'FEED' | 'REELS' | 'STORY', readonly string[]> = {
    FEED: ['views', 'reach', 'likes', 'comments', 'saved', 'shares', 'total_interactions', 'profile_visits', 'profile_activity', 'follows'],
    REELS: ['views', 'reach', 'likes', 'comments', 'saved', 'shares', 'total_interactions', 'ig_reels_avg_watch_time', 'ig_reels_video_view_total_time'],
    STORY: ['views', 'reach', 'replies', 'shares', 'navigation', 'total_interactions', 'profile_visits', 'profile_activity', 'follows'],
  };
  const allInsights = [...new Set(Object.values(insightsOfProductType).flat())];
  const productTypeOf = (kind: InstagramMedia['kind']) => (kind === 'story' ? 'STORY' : kind === 'reel' ? 'REELS' : 'FEED');
  const metrics = new MetricsBook();
  /** Media Instagram shows no insights for yet: error (#10) "Not enough viewers for the media to show insights". */
  const fewViewers = new Set<string>();
  const countsOf = (id: string) => ({
    like_count: metrics.get(id).likes ?? 0,
    comments_count: metrics.get(id).replies ?? [...comments.values()].filter((c) => c.mediaId === id).length,
  });

  function routes(prefix: string, flavour: 'instagram' | 'facebook') {
    const auth = (req: RecordedRequest) => {
      if (flavour === 'instagram' && tokens.stateOf(param(req, 'access_token') ?? '', req.now) === 'ended') throw new StandInReply(graphErrors.expiredToken());
      return requireToken(req, (t) => t === (flavour === 'instagram' ? user.igToken : user.fbToken) || (flavour === 'instagram' && tokens.stateOf(t, req.now) === 'live'));
    };
    const ownUser = (req: RecordedRequest) => {
      if (req.params.userId !== user.igUserId) throw new StandInReply(graphErrors.unknownObject(req.params.userId));
    };

    if (flavour === 'instagram') {
      standIn.on('GET', `${prefix}/me`, (req) => {
        auth(req);
        return { json: pick({ id: user.appScopedId, user_id: user.igUserId, username: user.username, name: user.name }, req.query.fields) };
      });
    }

    /**
     * Media insights (protocols.md section 12): `views` replaced impressions and plays; the old names are invalid
     * metrics. A metric the media's product type lacks refuses the whole call with #100, naming every such metric.
     */
    standIn.on('GET', `${prefix}/:id/insights`, (req) => {
      auth(req);
      const item = media.get(req.params.id);
      if (!item) throw new StandInReply(graphErrors.unknownObject(req.params.id));
      if (fewViewers.has(item.id)) return graphError({ code: 10, type: 'OAuthException', message: '(#10) Not enough viewers for the media to show insights' });
      const supported = insightsOfProductType[productTypeOf(item.kind)];
      const asked = (req.query.metric ?? '').split(',').map((n) => n.trim());
      const unsupported = asked.filter((n) => allInsights.includes(n) && !supported.includes(n));
      if (unsupported.length > 0) {
        return graphError({ code: 100, type: 'OAuthException', message: `(#100) The Media Insights API does not support the ${unsupported.join(', ')} metric for this media product type.` });
      }
      const m = metrics.get(item.id);
      return graphInsightsAnswer(item.id, req.query.metric, {
        values: { views: m.impressions, reach: m.reach, likes: m.likes, comments: m.replies, replies: m.replies, saved: m.saves, shares: m.shares },
        valid: allInsights,
        deprecated: ['impressions', 'plays', 'clips_replays_count', 'ig_reels_aggregated_all_plays_count', 'video_views'],
      });
    });

    standIn.on('GET', `${prefix}/:id`, (req) => {
      auth(req);
      const id = req.params.id;
      if (id === user.igUserId) return { json: pick({ id, username: user.username, name: user.name }, req.query.fields) };
      const container = containers.get(id);
      if (container) {
        if (container.status === 'IN_PROGRESS' && container.pollsLeft-- <= 0) container.status = 'FINISHED';
        const status = container.status === 'ERROR' ? 'Error: Media download has failed. The media URI doesn\'t meet our requirements.' : container.status === 'FINISHED' ? 'Finished: Media has been uploaded and it is ready to be published.' : container.status;
        return { json: pick({ id, status_code: container.status, status }, req.query.fields) };
      }
      const item = media.get(id);
      if (item) {
        if (fieldNames(req.query.fields)?.includes('permalink') && state.permalinkFailures > 0) {
          state.permalinkFailures -= 1;
          return graphErrors.transient();
        }
        return { json: pick({ id, caption: item.caption, timestamp: item.timestamp, shortcode: item.shortcode, permalink: noPermalink.has(id) ? undefined : item.permalink, media_type: item.kind.toUpperCase(), ...countsOf(id) }, req.query.fields) };
      }
      const comment = comments.get(id);
      if (comment) return { json: pick(replyView(comment), req.query.fields) };
      throw new StandInReply(graphErrors.unknownObject(id));
    });

    standIn.on('POST', `${prefix}/:userId/media`, (req) => {
      auth(req);
      ownUser(req);
      const fields = { ...req.form! };
      delete fields.access_token;
      const type = fields.media_type ?? 'IMAGE';
      if (type === 'CAROUSEL') {
        const children = (fields.children ?? '').split(',').filter(Boolean).map((id) => containers.get(id));
        if (children.length < 2 || children.length > 10 || children.some((c) => !c || c.fields.is_carousel_item !== 'true')) {
          return graphErrors.invalidParameter('(#100) The carousel must have between 2 and 10 valid children');
        }
      } else {
        const url = type === 'REELS' || type === 'VIDEO' ? fields.video_url : (fields.image_url ?? fields.video_url);
        if (!url) return graphErrors.invalidParameter(`(#100) The parameter ${type === 'REELS' || type === 'VIDEO' ? 'video_url' : 'image_url'} is required`);
        if (!/^https?:\/\//.test(url)) return graphError({ code: 9004, message: 'Only photo or video can be accepted as media type.' });
      }
      const failing = (fields.image_url && failingUrls.has(fields.image_url)) || (fields.video_url && failingUrls.has(fields.video_url));
      const container: InstagramContainer = {
        id: nextGraphId(), fields, status: failing ? 'ERROR' : 'IN_PROGRESS', pollsLeft: fields.video_url ? Math.max(state.processingPolls, 1) : state.processingPolls,
      };
      containers.set(container.id, container);
      return { json: { id: container.id } };
    });

    standIn.on('POST', `${prefix}/:userId/media_publish`, (req) => {
      auth(req);
      ownUser(req);
      const container = containers.get(param(req, 'creation_id') ?? '');
      if (!container) return graphErrors.unknownObject(param(req, 'creation_id') ?? '');
      if (container.status === 'IN_PROGRESS') return graphError({ code: 9007, subcode: 2207027, message: 'The media is not ready for publishing, please wait for a moment' });
      // A container is published once: Meta documents what PUBLISHED means but no answer to publishing it again, so a
      // refusal (code 100) stands for it here; Herald publishes only a container it read FINISHED (graph/containers.ts).
      if (container.status !== 'FINISHED') return graphErrors.invalidParameter(`(#100) The container is ${container.status}`);
      if (quota.usage >= quota.total) return graphError({ code: 9, subcode: 2207042, message: 'Application request limit reached' });
      quota.usage += 1;
      const type = container.fields.media_type;
      const kind = type === 'STORIES' ? 'story' : type === 'REELS' ? 'reel' : type === 'CAROUSEL' ? 'carousel' : 'feed';
      const shortcode = `C${container.id.slice(-8)}`;
      const item: InstagramMedia = {
        id: nextGraphId(), kind, caption: container.fields.caption, timestamp: graphTime(clock()), shortcode, containerId: container.id,
        permalink: kind === 'story' ? `https://www.instagram.com/stories/${user.username}/${container.id}/` : `https://www.instagram.com/${kind === 'reel' ? 'reel' : 'p'}/${shortcode}/`,
        children: kind === 'carousel' ? container.fields.children.split(',').map((id) => containers.get(id)!) : [],
      };
      media.set(item.id, item);
      container.status = 'PUBLISHED';
      container.mediaId = item.id;
      return { json: { id: item.id } };
    });

    standIn.on('GET', `${prefix}/:userId/content_publishing_limit`, (req) => {
      auth(req);
      ownUser(req);
      return { json: { data: [pick({ quota_usage: quota.usage, config: { quota_total: quota.total, quota_duration: 86400 } }, req.query.fields)].map(({ id, ...rest }) => rest) } };
    });

    for (const edge of ['media', 'stories'] as const) {
      standIn.on('GET', `${prefix}/:userId/${edge}`, (req) => {
        auth(req);
        ownUser(req);
        const list = [...media.values()].filter((m) => (edge === 'stories' ? m.kind === 'story' : m.kind !== 'story')).reverse();
        return cursorPage(req, standIn.origin, list.map((m) => ({ id: m.id, caption: m.caption, timestamp: m.timestamp })));
      });
    }

    standIn.on('GET', `${prefix}/:id/comments`, (req) => {
      auth(req);
      if (!media.has(req.params.id)) throw new StandInReply(graphErrors.unknownObject(req.params.id));
      const list = [...comments.values()].filter((c) => c.mediaId === req.params.id && c.parentId === null);
      const page = cursorPage(req, standIn.origin, list.map((c) => ({ id: c.id })));
      const body = page.json as { data: Array<Record<string, unknown>> };
      body.data = body.data.map((c) => pick(commentView(comments.get(String(c.id))!, req), req.query.fields));
      return page;
    });

    standIn.on('GET', `${prefix}/:id/replies`, (req) => {
      auth(req);
      if (!comments.has(req.params.id)) throw new StandInReply(graphErrors.unknownObject(req.params.id));
      return cursorPage(req, standIn.origin, [...comments.values()].filter((c) => c.parentId === req.params.id).map(replyView));
    });

    for (const edge of ['comments', 'replies'] as const) {
      standIn.on('POST', `${prefix}/:id/${edge}`, (req) => {
        auth(req);
        const message = param(req, 'message');
        if (!message) return graphErrors.invalidParameter('(#100) Missing message');
        if (edge === 'comments' && !media.has(req.params.id)) return graphErrors.unknownObject(req.params.id, 'post');
        if (edge === 'replies' && !comments.has(req.params.id)) return graphErrors.unknownObject(req.params.id, 'post');
        if (edge === 'replies') requireManageComments();
        return { json: { id: addComment(req.params.id, message, { id: user.igUserId, username: user.username }).id } };
      });
    }

    standIn.on('POST', `${prefix}/:id`, (req) => {
      auth(req);
      const comment = comments.get(req.params.id);
      if (!comment) throw new StandInReply(graphErrors.unknownObject(req.params.id, 'post'));
      requireManageComments();
      const hide = param(req, 'hide');
      if (hide !== 'true' && hide !== 'false') return graphErrors.invalidParameter('(#100) hide must be a boolean');
      comment.hidden = hide === 'true';
      return { json: { success: true } };
    });

    standIn.on('DELETE', `${prefix}/:id`, (req) => {
      auth(req);
      const id = req.params.id;
      if (comments.has(id)) {
        requireManageComments();
        comments.delete(id);
        for (const c of [...comments.values()]) if (c.parentId === id) comments.delete(c.id);
        return { json: { success: true } };
      }
      // Media delete exists only with Facebook login [unverified: third-party report, protocols.md section 6].
      if (flavour === 'instagram' || !media.has(id)) throw new StandInReply(graphErrors.unknownObject(id, 'delete'));
      media.delete(id);
      for (const c of [...comments.values()]) if (c.mediaId === id) comments.delete(c.id);
      return { json: { success: true } };
    });
  }

  // Instagram Login long-lived tokens (protocols.md section 13): `ig_refresh_token` on the unversioned origin, GET only.
  // `user.igToken` as given never ends.
  const tokens = new TokenBook('ig-token', 60 * 86_400);
  standIn.on('GET', '/refresh_access_token', graphTokenRenewal(tokens, 'ig_refresh_token', { get token() { return user.igToken; }, set token(value) { user.igToken = value; } }));

  routes('/v25.0', 'instagram');
  routes('/fb/v25.0', 'facebook');
  const origin = await standIn.start();
  return {
    standIn,
    origin: `${origin}/v25.0`,
    facebookOrigin: `${origin}/fb/v25.0`,
    user, containers, media, comments, quota, failingUrls, noPermalink, state, tokens,
    /** Granted permissions; delete `instagram_manage_comments` to have comment replies, hides and deletes refused (#200). */
    permissions,
    setClock(fn: () => Date) { clock = fn; },
    /** Numbers the media's insights report, in Herald's keys. */
    setMetrics: (id: string, values: Parameters<MetricsBook['set']>[1]) => metrics.set(id, values),
    fewViewers,
    addExternalComment(target: string, text: string, from = { id: '17841499999999999', username: 'visitor.one' }) {
      return addComment(target, text, from);
    },
    stop: () => standIn.stop(),
  };
}
