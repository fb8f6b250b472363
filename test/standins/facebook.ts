/**
 * Facebook Pages Graph API stand-in (protocols.md section 5): the Page node, unpublished photo uploads, feed posts
 * with `attached_media`, Page photo stories, deletes, comments with cursor paging, replies, hiding and deleting.
 * Errors use the Graph envelope; ids follow Graph's shapes (`<pageId>_<postId>` for posts, `<postId>_<n>` for comments).
 */
import { StandIn, StandInReply, type RecordedRequest } from './kit';
import { graphInsightsAnswer, MetricsBook } from './metrics';
import { cursorPage, graphError, graphErrors, graphTime, nextGraphId, param, pick, requireToken } from './graph';

interface FacebookPhoto { id: string; url?: string; sourceBytes?: number; alt?: string; published: boolean; usedBy?: string }
interface FacebookPost { id: string; kind: 'feed' | 'story'; message?: string; link?: string; photoIds: string[]; created_time: string }
interface FacebookCommentRecord {
  id: string; postId: string; parentId: string | null; message: string; from: { id: string; name: string };
  created_time: string; is_hidden: boolean; like_count: number; attachment_url?: string;
}

const FACEBOOK_VERSION = 'v25.0';

export async function startFacebookStandIn(opts: { pageId?: string; pageToken?: string; pageName?: string; userToken?: string } = {}) {
  const standIn = new StandIn('facebook');
  const page = { id: opts.pageId ?? '104857600000001', name: opts.pageName ?? 'Herald Test Page', username: 'heraldtestpage', token: opts.pageToken ?? 'page-token-1' };
  const photos = new Map<string, FacebookPhoto>();
  const posts = new Map<string, FacebookPost>();
  const comments = new Map<string, FacebookCommentRecord>();
  let clock = () => new Date();
  const v = `/${FACEBOOK_VERSION}`;
  const auth = (req: RecordedRequest) => requireToken(req, (t) => t === page.token);
  // A Page admin's user token: it reads the Page's public fields by id, and `/me` is the person, not the Page.
  const admin = { id: '100000000000042', name: 'Page Admin', token: opts.userToken ?? 'user-token-1' };
  const readAuth = (req: RecordedRequest) => requireToken(req, (t) => t === page.token || t === admin.token);
  // Permissions the Page token was granted; comment moderation (reply, hide, delete) needs pages_manage_engagement.
  const permissions = new Set(['pages_manage_posts', 'pages_read_engagement', 'pages_manage_engagement', 'pages_read_user_engagement', 'pages_show_list']);
  const requireEngagement = () => {
    if (!permissions.has('pages_manage_engagement')) throw new StandInReply(graphErrors.permission());
  };
  const ownPage = (req: RecordedRequest) => {
    if (req.params.pageId !== page.id) throw new StandInReply(graphErrors.unknownObject(req.params.pageId));
  };

  const commentView = (c: FacebookCommentRecord) => ({
    id: c.id, message: c.message, from: c.from, created_time: c.created_time, is_hidden: c.is_hidden, like_count: c.like_count,
    comment_count: [...comments.values()].filter((r) => r.parentId === c.id).length, parent: c.parentId ? { id: c.parentId } : undefined,
  });

  function addComment(target: string, message: string, from: { id: string; name: string }, attachmentUrl?: string): FacebookCommentRecord {
    const parentComment = comments.get(target);
    const post = parentComment ? posts.get(parentComment.postId) : posts.get(target);
    if (!post) throw new StandInReply(graphErrors.unknownObject(target, 'post'));
    // Graph nests replies one level deep: a reply to a reply joins the top-level comment's thread.
    const parentId = parentComment ? (parentComment.parentId ?? parentComment.id) : null;
    const local = post.id.split('_')[1];
    const record: FacebookCommentRecord = {
      id: `${local}_${nextGraphId()}`, postId: post.id, parentId, message, from, created_time: graphTime(clock()), is_hidden: false, like_count: 0, attachment_url: attachmentUrl,
    };
    comments.set(record.id, record);
    return record;
  }

  const metrics = new MetricsBook();

  /** The counts a post carries (protocols.md section 12); `shares` is left out when nobody shared. */
  function countsOf(post: FacebookPost) {
    const m = metrics.get(post.id);
    const commentCount = m.replies ?? [...comments.values()].filter((c) => c.postId === post.id).length;
    return {
      ...(m.shares ? { shares: { count: m.shares } } : {}),
      reactions: { data: [], summary: { total_count: m.likes ?? 0 } },
      comments: { data: [], summary: { order: 'ranked', total_count: commentCount, can_comment: true } },
    };
  }

  standIn.on('GET', `${v}/:id/insights`, (req) => {
    auth(req);
    const post = posts.get(req.params.id);
    if (!post) throw new StandInReply(graphErrors.unknownObject(req.params.id));
    const m = metrics.get(post.id);
    return graphInsightsAnswer(post.id, req.query.metric, {
      values: { post_media_view: m.impressions, post_total_media_view_unique: m.reach, post_clicks: m.clicks, post_video_views: m.video_views },
      valid: ['post_media_view', 'post_total_media_view_unique', 'post_clicks', 'post_video_views', 'post_reactions_by_type_total'],
      // Gone since June and November 2025 (every API version): asking for one is an invalid-metric error.
      deprecated: ['post_impressions', 'post_impressions_unique', 'post_impressions_organic', 'post_impressions_paid', 'post_impressions_organic_unique'],
    });
  });

  const pageFields = () => ({ id: page.id, name: page.name, username: page.username, link: `https://www.facebook.com/${page.username}` });
  standIn.on('GET', `${v}/me`, (req) => {
    const token = readAuth(req);
    return { json: pick(token === page.token ? pageFields() : { id: admin.id, name: admin.name }, req.query.fields) };
  });

  standIn.on('GET', `${v}/:id`, (req) => {
    const id = req.params.id;
    if (id === page.id) readAuth(req);
    else auth(req);
    if (id === page.id) return { json: pick(pageFields(), req.query.fields) };
    const post = posts.get(id);
    if (post) return { json: pick({ id: post.id, message: post.message, created_time: post.created_time, permalink_url: `https://www.facebook.com/${post.id}`, ...countsOf(post) }, req.query.fields) };
    const comment = comments.get(id);
    if (comment) return { json: pick(commentView(comment), req.query.fields) };
    throw new StandInReply(graphErrors.unknownObject(id));
  });

  standIn.on('POST', `${v}/:pageId/photos`, (req) => {
    auth(req);
    ownPage(req);
    const url = param(req, 'url');
    const source = req.multipart?.find((p) => p.name === 'source')?.file;
    if (!url && !source) return graphErrors.invalidParameter('(#324) Requires upload file');
    const photo: FacebookPhoto = { id: nextGraphId(), url, sourceBytes: source?.data.length, alt: param(req, 'alt_text_custom'), published: param(req, 'published') !== 'false' };
    photos.set(photo.id, photo);
    if (!photo.published) return { json: { id: photo.id } };
    const post = createPost('feed', { message: param(req, 'message') ?? param(req, 'caption'), photoIds: [photo.id] });
    return { json: { id: photo.id, post_id: post.id } };
  });

  function createPost(kind: 'feed' | 'story', fields: { message?: string; link?: string; photoIds: string[] }): FacebookPost {
    const post: FacebookPost = { id: `${page.id}_${nextGraphId()}`, kind, created_time: graphTime(clock()), ...fields };
    for (const id of fields.photoIds) photos.get(id)!.usedBy = post.id;
    posts.set(post.id, post);
    return post;
  }

  function attachedPhoto(id: string): string {
    const photo = photos.get(id);
    if (!photo || photo.published) throw new StandInReply(graphErrors.invalidParameter(`(#100) param attached_media must be an unpublished photo of the Page: ${id}`));
    return id;
  }

  standIn.on('POST', `${v}/:pageId/feed`, (req) => {
    auth(req);
    ownPage(req);
    const photoIds: string[] = [];
    for (let i = 0; param(req, `attached_media[${i}]`) !== undefined; i++) photoIds.push(attachedPhoto(JSON.parse(param(req, `attached_media[${i}]`)!).media_fbid));
    const message = param(req, 'message');
    const link = param(req, 'link');
    if (!message && !link && photoIds.length === 0) return graphErrors.invalidParameter('(#100) Missing message or attachment');
    if (message && message.length > 63_206) return graphErrors.invalidParameter('(#100) The message is too long');
    const duplicate = [...posts.values()].find((p) => p.kind === 'feed' && message && p.message === message && photoIds.length === 0 && p.photoIds.length === 0);
    if (duplicate) return graphError({ code: 506, message: 'Duplicate status message' });
    return { json: { id: createPost('feed', { message, link, photoIds }).id } };
  });

  standIn.on('POST', `${v}/:pageId/photo_stories`, (req) => {
    auth(req);
    ownPage(req);
    const photoId = attachedPhoto(param(req, 'photo_id') ?? '');
    const post = createPost('story', { photoIds: [photoId] });
    return { json: { success: true, post_id: post.id.split('_')[1] } };
  });

  standIn.on('GET', `${v}/:pageId/published_posts`, (req) => {
    auth(req);
    ownPage(req);
    const feed = [...posts.values()].filter((p) => p.kind === 'feed').reverse();
    return cursorPage(req, standIn.origin, feed.map((p) => ({ id: p.id, message: p.message, created_time: p.created_time })));
  });

  standIn.on('DELETE', `${v}/:id`, (req) => {
    auth(req);
    const id = req.params.id;
    const post = posts.get(id);
    if (post) {
      if (post.kind === 'story') return graphErrors.invalidParameter('(#100) Stories cannot be deleted through this endpoint');
      posts.delete(id);
      for (const c of [...comments.values()]) if (c.postId === id) comments.delete(c.id);
      return { json: { success: true } };
    }
    const comment = comments.get(id);
    if (comment) {
      requireEngagement();
      comments.delete(id);
      for (const c of [...comments.values()]) if (c.parentId === id) comments.delete(c.id);
      return { json: { success: true } };
    }
    throw new StandInReply(graphErrors.unknownObject(id, 'delete'));
  });

  standIn.on('GET', `${v}/:id/comments`, (req) => {
    auth(req);
    const id = req.params.id;
    if (!posts.has(id) && !comments.has(id)) throw new StandInReply(graphErrors.unknownObject(id));
    let list = [...comments.values()].filter((c) => (posts.has(id) ? c.postId === id : c.parentId === id));
    if (posts.has(id) && req.query.filter !== 'stream') list = list.filter((c) => c.parentId === null);
    if (req.query.order === 'reverse_chronological') list = list.reverse();
    return cursorPage(req, standIn.origin, list.map(commentView));
  });

  standIn.on('POST', `${v}/:id/comments`, (req) => {
    auth(req);
    const message = param(req, 'message');
    if (!message) return graphErrors.invalidParameter('(#100) Missing message');
    if (comments.has(req.params.id)) requireEngagement();
    return { json: { id: addComment(req.params.id, message, { id: page.id, name: page.name }, param(req, 'attachment_url')).id } };
  });

  standIn.on('POST', `${v}/:id`, (req) => {
    auth(req);
    const comment = comments.get(req.params.id);
    if (!comment) throw new StandInReply(graphErrors.unknownObject(req.params.id, 'post'));
    requireEngagement();
    const hidden = param(req, 'is_hidden');
    if (hidden !== 'true' && hidden !== 'false') return graphErrors.invalidParameter('(#100) is_hidden must be a boolean');
    comment.is_hidden = hidden === 'true';
    return { json: { success: true } };
  });

  const origin = await standIn.start();
  return {
    standIn,
    origin: `${origin}${v}`,
    page,
    admin,
    photos,
    posts,
    comments,
    /** Granted permissions; delete `pages_manage_engagement` to have comment replies, hides and deletes refused (#200). */
    permissions,
    setClock(fn: () => Date) { clock = fn; },
    /** Numbers the post's counts and insights report, in Herald's keys. */
    setMetrics: (id: string, values: Parameters<MetricsBook['set']>[1]) => metrics.set(id, values),
    /** A comment by someone else (or a reply to one), as a visitor of the Page would write it. */
    addExternalComment(target: string, message: string, from = { id: '900000000000001', name: 'Ada Visitor' }) {
      return addComment(target, message, from);
    },
    stop: () => standIn.stop(),
  };
}
