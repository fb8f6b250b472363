import assert from 'node:assert/strict';
import { ApiError, type ErrorCode } from '../../src/errors';
import type { RuleAccount } from '../../src/posts/rules/inputs';
import type { PlatformSlug } from '../../src/platforms/types';

/** Distinct valid v4 UUIDs for accounts and media. */
export const ids = {
  x: '11111111-1111-4111-8111-111111111111',
  bluesky: '22222222-2222-4222-8222-222222222222',
  telegram: '33333333-3333-4333-8333-333333333333',
  instagram: '44444444-4444-4444-8444-444444444444',
  facebook: '55555555-5555-4555-8555-555555555555',
  mastodon: '66666666-6666-4666-8666-666666666666',
  linkedin: '77777777-7777-4777-8777-777777777777',
  threads: '88888888-8888-4888-8888-888888888888',
  media: '99999999-9999-4999-8999-999999999999',
} as const;

export function account(platform: PlatformSlug, overrides: Partial<RuleAccount> = {}): RuleAccount {
  return {
    id: ids[platform],
    platform,
    premium: false,
    own_credentials: false,
    via: platform === 'instagram' ? 'instagram' : null,
    kind: null,
    timezone: null,
    ...overrides,
  };
}

/** Asserts `fn` throws an `ApiError` whose whole envelope is `{ error: { code, message } }`. */
export function throwsApi(fn: () => unknown, code: ErrorCode, message: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError, `expected ApiError, got ${String(err)}`);
    assert.deepEqual(err.toEnvelope(), { error: { code, message } });
    return true;
  });
}

export const free = { xLinkPosts: 'refused' } as const;
export const paid = { xLinkPosts: 'billed' } as const;
