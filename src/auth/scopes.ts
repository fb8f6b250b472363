import { z } from 'zod';

/** The scopes of decisions.md ("Keys"). A key whose `scopes` is null has full access (as keys that predate scopes do). */
export const scopes = ['posts:read', 'posts:write', 'accounts:read', 'accounts:write', 'keys:write', 'webhooks:read', 'webhooks:write'] as const;
export type Scope = (typeof scopes)[number];
export const ScopeSchema = z.enum(scopes);

/** Null = full access. */
export type ScopeList = readonly Scope[] | null;

export function holdsScope(granted: ScopeList, needed: Scope): boolean {
  return granted === null || granted.includes(needed);
}

/** `fullAccess`: full access was asked for; `missing`: the requested scopes the key lacks, in catalogue order. */
export type GrantRefusal = { fullAccess: boolean; missing: Scope[] };

/**
 * Why a key holding `granted` may not create a key with `requested` (null = full access), or null when it may
 * (publishing-api.md "Authentication" 4). Full access is more than every scope listed, as it also holds scopes added
 * later, so only a full-access key grants it.
 */
export function grantRefusal(granted: ScopeList, requested: ScopeList): GrantRefusal | null {
  if (granted === null) return null;
  const wanted = requested ?? scopes;
  const missing = scopes.filter((scope) => wanted.includes(scope) && !granted.includes(scope));
  return requested === null || missing.length > 0 ? { fullAccess: requested === null, missing } : null;
}

/**
 * Why a key that ends at `callerEndsAt` (null: never) may not create one ending at `requested` (null: never), or null
 * when it may. A longer lifetime is a wider grant (publishing-api.md "Authentication" 4): otherwise a leaked key that
 * expires in an hour would mint one that never does. The same end is allowed; a key created without `expires_at`
 * inherits the caller's (`api/routes/keys.ts`), as it inherits its scopes.
 */
export function lifetimeRefusal(callerEndsAt: Date | null, requested: Date | null): { callerEndsAt: Date } | null {
  if (callerEndsAt === null) return null;
  return requested === null || requested.getTime() > callerEndsAt.getTime() ? { callerEndsAt } : null;
}
