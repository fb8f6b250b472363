import { z } from 'zod';

/**
 * Request bodies of `POST /api/v1/posts`, `PATCH /api/v1/posts/:id` and `POST /api/v1/threads` (publishing-api.md
 * "Body fields", decisions.md "Threads"). Strict: any other field is 400 `bad_request` naming it. Shape only; the
 * rules between fields (`structure.ts`) and per platform run after parsing.
 */

const uuid = z.uuid({ error: 'must be a UUID' });

const httpUrl = z
  .string({ error: 'must be a string' })
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

// Named so that a client who sends the response's name, or a server-set field, is told what to do instead (whichever
// zod-error mapper runs). Documented as refused: the OpenAPI generator needs a `type` for a `never`.
const refusedFields = {
  scheduled_at: z
    .never({ error: 'not accepted; the request field is schedule_at (scheduled_at is its name in responses)' })
    .meta({ type: 'string', deprecated: true, description: 'Refused with 400 bad_request: the request field is schedule_at' })
    .optional(),
  group_id: z
    .never({ error: 'cannot be sent; the service sets it when a request names account_ids' })
    .meta({ type: 'string', deprecated: true, description: 'Refused with 400 bad_request: set by the service' })
    .optional(),
};

export const MediaEntrySchema = z
  .strictObject({
    id: uuid.optional().describe('Id of an uploaded media (POST /api/v1/media)'),
    url: httpUrl.optional().describe('Public image or video URL'),
    alt: z.string({ error: 'must be a string' }).optional().describe('Description for screen readers'),
  })
  .refine((entry) => (entry.id === undefined) !== (entry.url === undefined), 'needs exactly one of id or url')
  .meta({ id: 'MediaEntry' });

/** The three media spellings; at most one per level (`structure.ts`). */
export const mediaFields = {
  media: z.array(MediaEntrySchema, { error: 'must be an array' }).optional(),
  media_ids: z.array(uuid, { error: 'must be an array' }).optional().describe('Upload ids, when no alt text is needed'),
  media_urls: z.array(httpUrl, { error: 'must be an array' }).optional().describe('Public image/video URLs'),
};

/** `configuration`: keyed by platform slug; each block's options are checked by `configuration.ts`. */
export const ConfigurationSchema = z
  .record(z.string(), z.record(z.string(), z.unknown(), { error: 'must be an object' }), { error: 'must be an object' })
  .describe('Publishing options keyed by platform slug, e.g. { "instagram": { "placement": "story" } }')
  .meta({ id: 'PostConfiguration' });

const text = z.string({ error: 'must be a string' });
const firstComment = z.string({ error: 'must be a string' });
const scheduleAt = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .describe('ISO 8601: an instant with offset or Z, or a local time read in timezone or the account timezone');
const timezone = z.string({ error: 'must be a string' }).min(1, 'must not be empty').describe('IANA time zone name, e.g. Europe/Berlin');

export const AccountConfigurationSchema = z
  .strictObject({
    text: text.optional(),
    first_comment: firstComment.optional().describe('Empty string: this account publishes with no first comment'),
    configuration: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
    ...mediaFields,
  })
  .meta({ id: 'AccountConfiguration' });

const fanOutFields = {
  account_id: uuid.optional(),
  account_ids: z.array(uuid, { error: 'must be an array' }).optional(),
};

export const CreatePostBodySchema = z
  .strictObject({
    ...fanOutFields,
    account_configurations: z
      .record(z.string(), AccountConfigurationSchema, { error: 'must be an object' })
      .optional()
      .describe('Per-account overrides, keyed by account id; only with account_ids'),
    text: text.optional().describe('Required unless draft: true'),
    ...mediaFields,
    first_comment: firstComment.optional(),
    configuration: ConfigurationSchema.optional(),
    schedule_at: scheduleAt.optional(),
    timezone: timezone.optional(),
    draft: z.boolean({ error: 'must be a boolean' }).optional(),
    ...refusedFields,
  })
  .meta({ id: 'CreatePostBody' });
export type CreatePostBody = z.output<typeof CreatePostBodySchema>;

export const UpdatePostBodySchema = z
  .strictObject({
    text: text.optional(),
    ...mediaFields,
    first_comment: firstComment.optional().describe('Replaces; empty string removes'),
    configuration: ConfigurationSchema.optional(),
    schedule_at: scheduleAt.optional(),
    timezone: timezone.optional(),
    draft: z.boolean({ error: 'must be a boolean' }).optional().describe('Only on a draft, only true'),
    publish: z.boolean({ error: 'must be a boolean' }).optional().describe('Only on a draft; never with schedule_at'),
    ...refusedFields,
  })
  .meta({ id: 'UpdatePostBody' });
export type UpdatePostBody = z.output<typeof UpdatePostBodySchema>;

export const ThreadPartSchema = z
  .strictObject({
    text: text.optional().describe('Required unless draft: true'),
    ...mediaFields,
  })
  .meta({ id: 'ThreadPart' });
export type ThreadPart = z.output<typeof ThreadPartSchema>;

/** In a thread, text and media belong to the parts; an account can override its first comment and configuration. */
export const ThreadAccountConfigurationSchema = z
  .strictObject({
    first_comment: firstComment.optional(),
    configuration: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  })
  .meta({ id: 'ThreadAccountConfiguration' });

export const CreateThreadBodySchema = z
  .strictObject({
    ...fanOutFields,
    account_configurations: z.record(z.string(), ThreadAccountConfigurationSchema, { error: 'must be an object' }).optional(),
    posts: z.array(ThreadPartSchema, { error: 'must be an array' }).min(1, 'needs at least one part'),
    first_comment: firstComment.optional().describe('Published under the last part'),
    configuration: ConfigurationSchema.optional(),
    schedule_at: scheduleAt.optional(),
    timezone: timezone.optional(),
    draft: z.boolean({ error: 'must be a boolean' }).optional(),
    ...refusedFields,
  })
  .meta({ id: 'CreateThreadBody' });
export type CreateThreadBody = z.output<typeof CreateThreadBodySchema>;
