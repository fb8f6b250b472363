/**
 * The plans of decisions.md ("Plans"), as data. Quotas, the burst limiter, comment sync budgets and the x link-post
 * policy all read this table; nothing else spells these numbers.
 *
 * `null` means "custom": the number comes from the user's row (set with `herald users set-plan`). `Infinity` means
 * unlimited.
 */

export const planNames = ['free', 'agent', 'starter', 'pro', 'scale', 'enterprise'] as const;
export type PlanName = (typeof planNames)[number];

export type XLinkPostPolicy = 'refused' | 'billed';

interface Plan {
  name: PlanName;
  postsPerMonth: number | null;
  /** Free is a hard limit; paid plans keep publishing and record overage. */
  postQuotaHard: boolean;
  scheduledPerMonth: number | null;
  accounts: number | null;
  burstPerMinute: number;
  commentSyncsPerMonth: number | null;
  /** 0 = not included. */
  xCommentReadsPerMonth: number | null;
  xLinkPosts: XLinkPostPolicy;
  /** Bytes of uploads (`POST /api/v1/media`) a user may keep at once; downloaded copies of media URLs do not count. */
  mediaStorageBytes: number;
}

/** What Herald bills paid plans for an X link post, in US cents (X charges the operator 20 cents for one). */
export const xLinkPostPriceCents = 25;

export const plans: Readonly<Record<PlanName, Plan>> = {
  free: {
    name: 'free',
    postsPerMonth: 30,
    postQuotaHard: true,
    scheduledPerMonth: 30,
    accounts: 3,
    burstPerMinute: 120,
    commentSyncsPerMonth: 200,
    xCommentReadsPerMonth: 0,
    xLinkPosts: 'refused',
    mediaStorageBytes: 2_000_000_000,
  },
  agent: {
    name: 'agent',
    postsPerMonth: 300,
    postQuotaHard: false,
    scheduledPerMonth: 300,
    accounts: 10,
    burstPerMinute: 300,
    commentSyncsPerMonth: 1_000,
    xCommentReadsPerMonth: 500,
    xLinkPosts: 'billed',
    mediaStorageBytes: 10_000_000_000,
  },
  starter: {
    name: 'starter',
    postsPerMonth: 1_000,
    postQuotaHard: false,
    scheduledPerMonth: 1_000,
    accounts: 25,
    burstPerMinute: 600,
    commentSyncsPerMonth: 5_000,
    xCommentReadsPerMonth: 2_000,
    xLinkPosts: 'billed',
    mediaStorageBytes: 25_000_000_000,
  },
  pro: {
    name: 'pro',
    postsPerMonth: 5_000,
    postQuotaHard: false,
    scheduledPerMonth: 5_000,
    accounts: 100,
    burstPerMinute: 1_200,
    commentSyncsPerMonth: 25_000,
    xCommentReadsPerMonth: 10_000,
    xLinkPosts: 'billed',
    mediaStorageBytes: 100_000_000_000,
  },
  scale: {
    name: 'scale',
    postsPerMonth: null,
    postQuotaHard: false,
    scheduledPerMonth: null,
    accounts: null,
    burstPerMinute: 2_400,
    commentSyncsPerMonth: null,
    xCommentReadsPerMonth: null,
    xLinkPosts: 'billed',
    mediaStorageBytes: 500_000_000_000,
  },
  enterprise: {
    name: 'enterprise',
    postsPerMonth: null,
    postQuotaHard: false,
    scheduledPerMonth: null,
    accounts: Infinity,
    burstPerMinute: 6_000,
    commentSyncsPerMonth: Infinity,
    xCommentReadsPerMonth: Infinity,
    xLinkPosts: 'billed',
    mediaStorageBytes: Infinity,
  },
};

/** The custom numbers a user row may carry (scale and enterprise); null = not set. */
export interface CustomQuotas {
  post_quota: number | null;
  scheduled_quota: number | null;
  account_limit: number | null;
  comment_sync_quota: number | null;
  x_comment_read_quota: number | null;
}

export interface EffectiveLimits {
  postsPerMonth: number;
  postQuotaHard: boolean;
  scheduledPerMonth: number;
  accounts: number;
  burstPerMinute: number;
  commentSyncsPerMonth: number;
  xCommentReadsPerMonth: number;
  xLinkPosts: XLinkPostPolicy;
}

/**
 * The limits that apply to one user: the plan's number, or the user's custom number where the plan says custom.
 * A custom number never set on a custom plan means 0 (nothing allowed) so that a misconfigured account fails closed.
 */
export function effectiveLimits(planName: PlanName, custom: CustomQuotas): EffectiveLimits {
  const plan = plans[planName];
  const pick = (planValue: number | null, customValue: number | null) =>
    planValue === null ? (customValue ?? 0) : planValue;
  return {
    postsPerMonth: pick(plan.postsPerMonth, custom.post_quota),
    postQuotaHard: plan.postQuotaHard,
    scheduledPerMonth: pick(plan.scheduledPerMonth, custom.scheduled_quota),
    accounts: pick(plan.accounts, custom.account_limit),
    burstPerMinute: plan.burstPerMinute,
    commentSyncsPerMonth: pick(plan.commentSyncsPerMonth, custom.comment_sync_quota),
    xCommentReadsPerMonth: pick(plan.xCommentReadsPerMonth, custom.x_comment_read_quota),
    xLinkPosts: plan.xLinkPosts,
  };
}

/** How messages name a plan: "the Free plan" ("your plan" for a name the table does not know). */
export function planLabel(planName: PlanName): string {
  return plans[planName] ? `the ${planName[0]!.toUpperCase()}${planName.slice(1)} plan` : 'your plan';
}
