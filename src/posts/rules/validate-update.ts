import { checkAccountPost } from './account-rules';
import { checkConfigurationPlatforms, checkThreadPlacement } from './configuration';
import type { AccountBody, ConfigurationBlock, RuleAccount, RuleMode, RulePlan } from './inputs';
import type { UpdatePostBody } from './request-schemas';
import { accountBlock, mediaSelectionOf } from './resolve-account-body';
import { checkTimezone } from './schedule';
import { scheduleForAccount } from './schedule-for-account';
import { checkDraftTextLength } from './text-length';
import { checkUpdateRequest, type EditablePost, type UpdateIntent } from './update-request';
import { throwFirst, type Violation } from './violation';
import { warningsFor, type WarningEntry } from './warnings';

/**
 * `PATCH /api/v1/posts/:id` without I/O: which change is asked (`update-request.ts`), the post as it will be after the
 * change, and every create rule on it (a promotion or an edit of a scheduled post refuses; a draft edit warns).
 */
export interface UpdateContext {
  post: EditablePost & { inThread: boolean };
  account: RuleAccount;
  plan: RulePlan;
  now: Date;
  /** The post as stored, in the shape the rules read. */
  current: AccountBody;
  /** Its stored time (a draft's remembered time, a scheduled post's time), or null. */
  currentScheduledAt: Date | null;
  /** The account's other scheduled times, without this post and the parts of its thread. */
  otherScheduledTimes?: readonly Date[];
}

export interface UpdateValidation {
  intent: UpdateIntent;
  body: AccountBody;
  /** The time after the change; null when publishing now or a draft without a time. */
  scheduledAt: Date | null;
  /** True when the request moved the time (the service reports `rescheduled_post_ids`). */
  rescheduled: boolean;
  xLinkBilled: string[];
  /** Drafts that stay drafts; `[]` otherwise. */
  warnings: WarningEntry[];
}

/** Replaces only what the request names: media lists (`[]` removes), first comment (`''` removes), configuration (`{}` resets). */
export function applyUpdate(current: AccountBody, body: UpdatePostBody, account: Pick<RuleAccount, 'platform'>): AccountBody {
  const media = mediaSelectionOf(body);
  let configuration: ConfigurationBlock | null = current.configuration;
  if (body.configuration !== undefined) {
    const block = body.configuration[account.platform];
    configuration = block === undefined || Object.keys(block).length === 0 ? null : accountBlock(block, account.platform);
  }
  return {
    accountId: current.accountId,
    text: body.text ?? current.text,
    media: media ? media.items : current.media,
    mediaSpelling: media ? media.spelling : current.mediaSpelling,
    firstComment: body.first_comment === undefined ? current.firstComment : body.first_comment === '' ? null : body.first_comment,
    configuration,
  };
}

export function validateUpdateRequest(body: UpdatePostBody, context: UpdateContext): UpdateValidation {
  const decided = checkUpdateRequest(body, context.post);
  throwFirst(decided.violations);
  const intent = decided.intent as UpdateIntent;
  const staysDraft = context.post.status === 'draft' && intent === 'edit';
  const mode: RuleMode = staysDraft ? 'draft' : 'send';
  if (staysDraft && body.text !== undefined) throwFirst([checkDraftTextLength(body.text, 'text')].filter((v): v is Violation => v !== null));
  if (body.timezone !== undefined) throwFirst([checkTimezone(body.timezone)].filter((v): v is Violation => v !== null));
  const configurationKeys = checkConfigurationPlatforms(body.configuration, new Set([context.account.platform]));

  const next = applyUpdate(context.current, body, context.account);
  const schedule =
    intent === 'promote_publish'
      ? { scheduledAt: null, violations: [], notices: [] }
      : body.schedule_at !== undefined
        ? scheduleForAccount({ scheduleAt: body.schedule_at, timezone: body.timezone }, context.account, { mode, now: context.now, others: context.otherScheduledTimes ?? [] })
        : remembered(context, mode);
  const findings = checkAccountPost(context.account, context.plan, next);
  const violations = [
    ...configurationKeys,
    ...schedule.violations,
    ...(context.post.inThread ? checkThreadPlacement(context.account.platform, next.configuration) : []),
    ...findings.violations,
  ];
  const notices = [...schedule.notices, ...findings.notices];
  if (mode === 'send') throwFirst(violations);
  return {
    intent,
    body: next,
    scheduledAt: schedule.scheduledAt,
    rescheduled: body.schedule_at !== undefined,
    xLinkBilled: findings.xLinkBilled,
    warnings: mode === 'draft' ? warningsFor(context.account, { violations, notices }) : [],
  };
}

/** No `schedule_at` sent: the stored time stays; a draft is told when it has passed. */
function remembered(context: UpdateContext, mode: RuleMode) {
  const at = context.currentScheduledAt;
  if (mode !== 'draft' || at === null || at.getTime() > context.now.getTime()) {
    return { scheduledAt: at, violations: [] as Violation[], notices: [] };
  }
  return scheduleForAccount({ scheduleAt: at.toISOString() }, context.account, { mode, now: context.now, others: [] });
}
