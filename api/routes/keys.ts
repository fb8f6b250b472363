import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../../src/auth/api-keys';
import { type GrantRefusal, grantRefusal, lifetimeRefusal, ScopeSchema, scopes } from '../../src/auth/scopes';
import type { ApiKeyRow } from '../../src/db/tables/api-keys';
import { acceptedInstantRange, isAcceptedInstant } from '../../src/db/timestamp';
import { ApiError } from '../../src/errors';
import { keyAuthenticatorOf } from '../middleware/auth';
import { defineRoute } from '../route';
import { idParams } from '../validation';

/** decisions.md "Keys": POST/GET/DELETE /api/v1/keys, scope `keys:write` for all three. */

const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: 'First characters of the key, to recognise it' }),
    scopes: z.array(ScopeSchema).nullable().meta({ description: 'null = full access' }),
    expires_at: z.string().nullable(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: 'ApiKey' });

const CreatedApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    api_key: z.string().meta({ description: 'The secret. Shown once; only its hash is stored' }),
    scopes: z.array(ScopeSchema).nullable(),
    expires_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'CreatedApiKey' });

const createKeyBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  scopes: z
    .array(ScopeSchema.meta({ description: scopes.join(', ') }), { error: `must be an array of scopes (${scopes.join(', ')})` })
    .min(1, 'must name at least one scope; omit the field to inherit this key\'s scopes')
    .nullable()
    .optional()
    .meta({ description: "Omitted: the new key inherits the calling key's scopes. null: full access (only a full-access key may ask)" }),
  expires_at: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 timestamp with a timezone, like 2030-01-01T00:00:00Z' })
    .refine((value) => isAcceptedInstant(new Date(value)), `must be ${acceptedInstantRange}`)
    .optional()
    .meta({ description: "Omitted: the new key expires when the calling key does (never, for a key that does not). No later than the calling key's" }),
});

function toApiKeyView(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

function grantRefused({ fullAccess, missing }: GrantRefusal): ApiError {
  const lacking = missing.join(', ');
  if (fullAccess) {
    return new ApiError(
      'insufficient_scope',
      `A full-access key can only be created by a full-access key; ${missing.length > 0 ? `this key lacks ${lacking}` : 'this key holds only the scopes it lists'}`,
    );
  }
  return new ApiError('insufficient_scope', `This API key cannot grant ${lacking}: it does not hold ${missing.length > 1 ? 'those scopes' : 'that scope'}`);
}

export const keysRoutes = [
  defineRoute({
    method: 'post',
    path: '/keys',
    summary: 'Create an API key',
    description:
      "A key cannot grant a scope the calling key lacks (403 insufficient_scope naming it), nor outlive it: an `expires_at` after the calling key's is 403 insufficient_scope. Omitting `scopes` gives the new key the caller's scopes, so only a full-access key mints a full-access key; omitting `expires_at` gives it the caller's expiry (none for a key that does not expire).",
    tags: ['Keys'],
    scope: 'keys:write',
    body: createKeyBody,
    responses: { 201: { description: 'The new key, with its secret (shown once)', schema: z.object({ data: CreatedApiKeySchema }) } },
    handler: async ({ body, auth, deps }) => {
      const requested = body.scopes === undefined ? auth.scopes : body.scopes === null ? null : [...new Set(body.scopes)];
      const refusal = grantRefusal(auth.scopes, requested);
      if (refusal) throw grantRefused(refusal);
      // Omitted, the new key ends when the calling key does (never, for a key that does not end).
      let expiresAt: Date | null = auth.expiresAt;
      if (body.expires_at !== undefined) {
        expiresAt = new Date(body.expires_at);
        if (expiresAt.getTime() <= Date.now()) throw new ApiError('bad_request', 'expires_at: must be in the future');
      }
      const outlives = lifetimeRefusal(auth.expiresAt, expiresAt);
      if (outlives) {
        const end = outlives.callerEndsAt.toISOString();
        throw new ApiError('insufficient_scope', `This API key expires at ${end} and cannot create a key that lasts longer: send an expires_at no later than ${end}, or omit it to inherit this key's`);
      }
      const { row, apiKey } = await createApiKey(deps.db, { userId: auth.userId, name: body.name, scopes: requested, expiresAt });
      return {
        status: 201,
        body: {
          data: {
            id: row.id,
            name: row.name,
            api_key: apiKey,
            scopes: row.scopes,
            expires_at: row.expires_at?.toISOString() ?? null,
            created_at: row.created_at.toISOString(),
          },
        },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/keys',
    summary: 'List API keys',
    description: 'Every key of the user, newest first, revoked and expired ones included. Secrets are never shown again.',
    tags: ['Keys'],
    scope: 'keys:write',
    responses: { 200: { description: 'The keys', schema: z.object({ data: z.array(ApiKeySchema) }) } },
    handler: async ({ auth, deps }) => ({ status: 200, body: { data: (await listApiKeys(deps.db, auth.userId)).map(toApiKeyView) } }),
  }),
  defineRoute({
    method: 'delete',
    path: '/keys/:id',
    summary: 'Revoke an API key',
    description: 'The key stops working at once. Revoking a revoked key answers the same 200. Another user\'s key is 404.',
    tags: ['Keys'],
    scope: 'keys:write',
    params: idParams,
    errors: ['not_found'],
    responses: { 200: { description: 'The revoked key', schema: z.object({ data: ApiKeySchema }) } },
    handler: async ({ params, auth, deps }) => {
      const row = await revokeApiKey(deps.db, params.id, auth.userId);
      if (!row) throw new ApiError('not_found', `API key ${params.id} not found`);
      keyAuthenticatorOf(deps).forget(row.id);
      return { status: 200, body: { data: toApiKeyView(row) } };
    },
  }),
];
