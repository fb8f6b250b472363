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

/** Scopes in `requested` (null = all of them) that `granted` lacks, in catalogue order. */
export function missingScopes(granted: ScopeList, requested: ScopeList): Scope[] {
  if (granted === null) return [];
  const wanted = requested ?? scopes;
  return scopes.filter((scope) => wanted.includes(scope) && !granted.includes(scope));
}
