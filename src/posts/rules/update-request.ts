import type { PostStatus } from '../../db/tables/posts';
import type { UpdatePostBody } from './request-schemas';
import { mediaSpellingOf } from './structure';
import { violation, type Violation } from './violation';

/**
 * What a `PATCH /api/v1/posts/:id` asks for (publishing-api.md "Post status" table, "Drafts behaviour" 4):
 * - `edit`: change a scheduled post, or a draft that stays a draft (`draft: true`, or no promotion asked);
 * - `promote_schedule`: a draft given `schedule_at` without `draft: true`;
 * - `promote_publish`: a draft given `publish: true`.
 */
export type UpdateIntent = 'edit' | 'promote_schedule' | 'promote_publish';

export interface EditablePost {
  status: PostStatus;
  /** The draft was already promoted (its row points at the post it became). */
  promoted: boolean;
  /**
   * An earlier attempt to publish it never reported back (its mark is open, `src/posts/attempt-marks.ts`): it may be
   * live, and its next attempt looks for it by what was sent. Absent: no attempt open.
   */
  attemptOpen?: boolean;
}

/**
 * What the look before sending again compares with the platform's posts (`findPublished`: the text, the media's shape,
 * the placement): changed while an attempt is open, the look would search for what was never sent, miss the post
 * that went out, and send a second one.
 */
const lookedForFields = ['text', 'media', 'media_ids', 'media_urls', 'configuration'] as const;

const changeFields = ['text', 'media', 'media_ids', 'media_urls', 'first_comment', 'configuration', 'schedule_at'] as const;

export function checkUpdateRequest(body: UpdatePostBody, post: EditablePost): { intent: UpdateIntent | null; violations: Violation[] } {
  const refuse = (v: Violation) => ({ intent: null, violations: [v] });
  if (post.status !== 'draft' && post.status !== 'scheduled') {
    return refuse(violation('post_not_editable', `The post is ${post.status}; only scheduled posts and drafts can be edited`));
  }
  if (post.status === 'scheduled' && post.attemptOpen && lookedForFields.some((field) => body[field] !== undefined)) {
    return refuse(
      violation(
        'post_not_editable',
        'An earlier attempt to publish this post did not report back, so it may already be on the platform: its text, media and configuration cannot change until its next attempt has checked (its time and first comment can)',
      ),
    );
  }
  if (post.status === 'draft' && post.promoted) {
    return refuse(violation('post_not_editable', 'The draft was already promoted; edit the post it became'));
  }
  if (post.status !== 'draft' && (body.publish !== undefined || body.draft !== undefined)) {
    const field = body.publish !== undefined ? 'publish' : 'draft';
    return refuse(violation('bad_request', `${field} applies only to drafts; this post is ${post.status}`));
  }
  if (body.draft === false) {
    return refuse(violation('bad_request', 'draft: false is not accepted; promote a draft with schedule_at or publish: true'));
  }
  if (body.publish === false) {
    return refuse(violation('bad_request', 'publish: false is not accepted; leave publish out to edit the draft without publishing it'));
  }
  if (body.publish === true && body.schedule_at !== undefined) {
    return refuse(violation('bad_request', 'publish: true cannot be combined with schedule_at; send one or the other'));
  }
  if (body.publish === true && body.draft === true) {
    return refuse(violation('bad_request', 'publish: true cannot be combined with draft: true'));
  }
  const spelling = mediaSpellingOf(body).violation;
  if (spelling) return refuse(spelling);
  const changes = changeFields.some((field) => body[field] !== undefined) || body.publish === true || body.draft === true;
  if (!changes) {
    const message =
      body.timezone !== undefined
        ? 'Nothing to change: timezone applies only together with schedule_at'
        : 'Nothing to change: send at least one field to update';
    return refuse(violation('bad_request', message));
  }
  if (post.status === 'scheduled') return { intent: 'edit', violations: [] };
  if (body.publish === true) return { intent: 'promote_publish', violations: [] };
  if (body.schedule_at !== undefined && body.draft !== true) return { intent: 'promote_schedule', violations: [] };
  return { intent: 'edit', violations: [] };
}
