import type { PlatformSlug } from '../../platforms/types';
import { checkAccountPost, type AccountFindings } from './account-rules';
import { checkConfigurationPlatforms } from './configuration';
import { settleFindings, withAccountPrefix } from './fan-out';
import type { AccountBody, RuleAccount, RulePlan, RuleMode } from './inputs';
import type { CreatePostBody } from './request-schemas';
import { resolveAccountBody } from './resolve-account-body';
import { checkTimezone } from './schedule';
import { scheduleForAccount } from './schedule-for-account';
import { checkCreatePostStructure } from './structure';
import { checkDraftTextLength } from './text-length';
import { throwFirst, type Violation } from './violation';
import type { WarningEntry } from './warnings';

/**
 * Everything `POST /api/v1/posts` checks that needs no I/O, in order: body structure, draft text ceiling, timezone,
 * then each account (schedule, configuration, text, media, first comment, x links). Throws the refusal as an
 * `ApiError`; returns what each account will publish, when, and which x link charges to record.
 */
export interface RequestContext {
  /** The accounts the request names, in the order it names them; already known to be the user's and active. */
  accounts: readonly RuleAccount[];
  plan: RulePlan;
  now: Date;
  /** Each account's other scheduled times (5-minute spacing); missing = none. */
  scheduledTimes?: Readonly<Record<string, readonly Date[]>>;
}

export interface AccountPlanOf<B> {
  account: RuleAccount;
  body: B;
  scheduledAt: Date | null;
  xLinkBilled: string[];
}

export interface RequestValidation<B> {
  fanOut: boolean;
  mode: RuleMode;
  accounts: AccountPlanOf<B>[];
  /** Drafts only; `[]` when nothing would go wrong. */
  warnings: WarningEntry[];
}

/** Draft text ceiling (refused even in a draft): the top-level text and every override. */
export function checkDraftTexts(texts: ReadonlyArray<{ field: string; text: string | undefined }>): Violation[] {
  return texts.flatMap(({ field, text }) => {
    const v = text === undefined ? null : checkDraftTextLength(text, field);
    return v ? [v] : [];
  });
}

/** The request-level fields posts and threads share. */
interface SharedRequestFields {
  mode: RuleMode;
  fanOut: boolean;
  configuration?: CreatePostBody['configuration'];
  scheduleAt?: string;
  timezone?: string;
}

/**
 * Shared by posts and threads, after their own structure checks: the timezone, then the accounts in the order named;
 * a send throws the first violation of the first failing account. Request-level violations (a `configuration` key)
 * refuse a send before any account, and are reported against every account in a draft.
 */
export function runAccounts<B>(
  request: SharedRequestFields,
  context: RequestContext,
  perAccount: (account: RuleAccount) => { body: B; findings: AccountFindings },
): RequestValidation<B> {
  if (request.timezone !== undefined) throwFirst([checkTimezone(request.timezone)].filter((v): v is Violation => v !== null));
  const used = new Set<PlatformSlug>(context.accounts.map((a) => a.platform));
  const options = {
    mode: request.mode,
    fanOut: request.fanOut,
    requestViolations: checkConfigurationPlatforms(request.configuration, used),
    schedule: { scheduleAt: request.scheduleAt, timezone: request.timezone },
  };
  if (options.mode === 'send') throwFirst(options.requestViolations);
  const accounts: AccountPlanOf<B>[] = [];
  const warnings: WarningEntry[] = [];
  for (const account of context.accounts) {
    withAccountPrefix(account, options.fanOut, () => {
      const schedule = scheduleForAccount(options.schedule, account, {
        mode: options.mode,
        now: context.now,
        others: context.scheduledTimes?.[account.id] ?? [],
      });
      const { body, findings } = perAccount(account);
      const all: AccountFindings = {
        violations: [...schedule.violations, ...(options.mode === 'draft' ? options.requestViolations : []), ...findings.violations],
        notices: [...schedule.notices, ...findings.notices],
        xLinkBilled: findings.xLinkBilled,
      };
      warnings.push(...settleFindings([{ account, findings: all }], { mode: options.mode, fanOut: false }));
      accounts.push({ account, body, scheduledAt: schedule.scheduledAt, xLinkBilled: all.xLinkBilled });
    });
  }
  return { fanOut: options.fanOut, mode: options.mode, accounts, warnings };
}

export function validatePostRequest(body: CreatePostBody, context: RequestContext): RequestValidation<AccountBody> {
  const mode: RuleMode = body.draft === true ? 'draft' : 'send';
  throwFirst(checkCreatePostStructure(body));
  if (mode === 'draft') {
    throwFirst(
      checkDraftTexts([
        { field: 'text', text: body.text },
        ...Object.entries(body.account_configurations ?? {}).map(([id, entry]) => ({ field: `account_configurations.${id}.text`, text: entry.text })),
      ]),
    );
  }
  return runAccounts(
    { mode, fanOut: body.account_ids !== undefined, configuration: body.configuration, scheduleAt: body.schedule_at, timezone: body.timezone },
    context,
    (account) => {
      const accountBody = resolveAccountBody(body, account);
      return { body: accountBody, findings: checkAccountPost(account, context.plan, accountBody) };
    },
  );
}
