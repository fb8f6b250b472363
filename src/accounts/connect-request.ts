import { z } from 'zod';
import { isPlatformSlug, requireAvailablePlatform } from '../platforms/availability';
import { platformSlugs } from '../platforms/types';

/**
 * The body of `POST /api/v1/accounts` (decisions.md "Accounts"): one strict zod object per platform, discriminated
 * by `platform` (default `x`), so an unknown field is a 400 naming it and the OpenAPI document shows each shape.
 *
 * Checks that answer a code other than `bad_request` (`bluesky_app_password_required`, `mastodon_instance_invalid`,
 * a refused `service_url`, an invalid `timezone`) run in `prepareConnection`, after this parse, because the route
 * pipeline turns every zod issue into `bad_request`.
 */

/** A type error with our wording, except for a missing field, which the route layer words as `<field> is required`. */
const typeError = (message: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? undefined : message) });

const secret = (name: string) =>
  z
    .string(typeError(`must be a string (the ${name})`))
    .trim()
    .min(1, 'must not be empty')
    .max(4096, 'must be at most 4096 characters');

const digits = (what: string) => z.string(typeError(`must be a string of digits (the ${what})`)).trim().regex(/^\d{1,30}$/, `must be the numeric ${what}`);

/** Numeric ids may come as JSON numbers; they are kept as text. */
const numberAsText = (value: unknown) => (typeof value === 'number' ? String(value) : value);

const timezone = z
  .string(typeError('must be a string'))
  .trim()
  .min(1, 'must not be empty')
  .optional()
  .meta({ description: 'IANA time zone name (Europe/Berlin); used by schedule_at without an offset' });

const XConnect = z
  .strictObject({
    platform: z.literal('x').default('x').meta({ description: 'Default when omitted' }),
    access_token: secret('access token').meta({
      description: 'OAuth 2.0 user token; or, with the three fields below, the OAuth 1.0a access token of your own X app',
    }),
    refresh_token: secret('refresh token').optional().meta({ description: 'OAuth 2.0 only' }),
    api_key: secret('API key').optional().meta({ description: 'Own X API credentials (OAuth 1.0a): consumer key' }),
    api_secret: secret('API secret').optional().meta({ description: 'Own X API credentials: consumer secret' }),
    access_token_secret: secret('access token secret').optional().meta({ description: 'Own X API credentials: access token secret' }),
    timezone,
  })
  .superRefine((body, ctx) => {
    const own = ['api_key', 'api_secret', 'access_token_secret'] as const;
    if (!own.some((field) => body[field] !== undefined)) return;
    for (const field of own) {
      if (body[field] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: 'is required with own X API credentials (api_key, api_secret, access_token, access_token_secret)',
        });
      }
    }
    if (body.refresh_token !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['refresh_token'], message: 'belongs to OAuth 2.0 tokens; own X API credentials take none' });
    }
  })
  .meta({ id: 'ConnectXAccount', description: 'X: an OAuth 2.0 user token, or your own X API credentials (OAuth 1.0a)' });

const BlueskyConnect = z
  .strictObject({
    platform: z.literal('bluesky'),
    handle: z.string(typeError('must be a string')).trim().min(1, 'must not be empty').max(253, 'must be at most 253 characters'),
    app_password: z
      .string(typeError('must be a string'))
      .meta({ description: 'An app password: four groups of four lowercase letters or digits joined by hyphens' }),
    service_url: z.string(typeError('must be a string')).optional().meta({ description: 'Default https://bsky.social' }),
    timezone,
  })
  .meta({ id: 'ConnectBlueskyAccount' });

const MastodonConnect = z
  .strictObject({
    platform: z.literal('mastodon'),
    instance_url: z
      .string(typeError('must be a string'))
      .meta({ description: 'Server name, handle or profile URL (mastodon.social, @me@mastodon.social); only the server is kept' }),
    access_token: secret('access token'),
    timezone,
  })
  .meta({ id: 'ConnectMastodonAccount' });

const TelegramConnect = z
  .strictObject({
    platform: z.literal('telegram'),
    bot_token: secret('bot token').regex(/^\d{1,20}:[A-Za-z0-9_-]{20,200}$/, 'must be a bot token as BotFather gives it (123456789:AA...)'),
    chat_id: z
      .preprocess(
        numberAsText,
        z
          .string(typeError('must be @channelname or a numeric chat id'))
          .trim()
          .regex(/^(@[A-Za-z][A-Za-z0-9_]{3,31}|-?\d{1,20})$/, 'must be @channelname or a numeric chat id'),
      )
      .meta({ description: '@channelname or numeric chat id' }),
    timezone,
  })
  .meta({ id: 'ConnectTelegramAccount' });

const FacebookConnect = z
  .strictObject({
    platform: z.literal('facebook'),
    page_id: digits('Page id'),
    access_token: secret('Page access token').meta({ description: 'A Page access token' }),
    timezone,
  })
  .meta({ id: 'ConnectFacebookAccount' });

const InstagramConnect = z
  .strictObject({
    platform: z.literal('instagram'),
    via: z
      .enum(['instagram', 'facebook'], typeError('must be instagram or facebook'))
      .default('instagram')
      .meta({ description: 'instagram: Instagram Login token; facebook: a Facebook Login token of the linked Page' }),
    access_token: secret('access token'),
    ig_user_id: digits('Instagram user id').optional().meta({ description: 'Required when via is facebook' }),
    timezone,
  })
  .superRefine((body, ctx) => {
    if (body.via === 'facebook' && body.ig_user_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['ig_user_id'], message: 'is required when via is facebook' });
    }
    if (body.via === 'instagram' && body.ig_user_id !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['ig_user_id'], message: 'is only used when via is facebook' });
    }
  })
  .meta({ id: 'ConnectInstagramAccount' });

const ThreadsConnect = z
  .strictObject({ platform: z.literal('threads'), access_token: secret('access token'), timezone })
  .meta({ id: 'ConnectThreadsAccount' });

const LinkedInConnect = z
  .strictObject({
    platform: z.literal('linkedin'),
    access_token: secret('access token'),
    refresh_token: secret('refresh token').optional().meta({ description: 'Programmatic refresh token (approved apps); Herald renews the access token with it' }),
    organization_id: z
      .preprocess(
        numberAsText,
        z
          .string(typeError('must be the numeric organization id'))
          .trim()
          .transform((value) => value.replace(/^urn:li:organization:/, ''))
          .pipe(z.string().regex(/^\d{1,30}$/, 'must be the numeric organization id (or urn:li:organization:<id>)')),
      )
      .optional()
      .meta({ description: 'Post as this Page; without it, as the member' }),
    timezone,
  })
  .meta({ id: 'ConnectLinkedInAccount' });

const connectSchemas = z.discriminatedUnion('platform', [
  XConnect,
  BlueskyConnect,
  MastodonConnect,
  TelegramConnect,
  FacebookConnect,
  InstagramConnect,
  ThreadsConnect,
  LinkedInConnect,
]);

/**
 * Before the per-platform shapes: a `platform` that is not one of the eight answers as decisions.md says
 * (never supported: 501 `platform_unsupported`; announced: 501 `platform_coming_soon`; anything else: 400
 * naming the choices). Which of the eight are switched off by HERALD_COMING_SOON is checked by the service, which
 * has the configuration.
 */
function gatePlatform(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const platform = (value as { platform?: unknown }).platform;
  if (typeof platform !== 'string') return value;
  const slug = platform.trim().toLowerCase();
  if (!isPlatformSlug(slug)) requireAvailablePlatform(platform, new Set());
  return { ...value, platform: slug };
}

export const ConnectAccountBody = z.preprocess(gatePlatform, connectSchemas).meta({
  id: 'ConnectAccount',
  description: `Fields by platform (${platformSlugs.join(', ')}); \`platform\` defaults to x. Credentials are verified with the platform before anything is saved, stored encrypted, and never returned.`,
});

export type ConnectAccountRequest = z.output<typeof connectSchemas>;

export const UpdateAccountBody = z
  .strictObject({
    active: z.boolean(typeError('must be true or false')).optional().meta({
      description: 'false switches the account off (its scheduled posts are cancelled); true switches it back on within the plan limit',
    }),
    timezone: z
      .string(typeError('must be a string or null'))
      .trim()
      .min(1, 'must not be empty; use null to clear it')
      .nullable()
      .optional()
      .meta({ description: 'IANA time zone name; null clears it' }),
  })
  .meta({ id: 'UpdateAccount' });

export type UpdateAccountRequest = z.output<typeof UpdateAccountBody>;
