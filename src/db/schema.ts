import type { AccountsTables } from './tables/accounts';
import type { AnalyticsTables } from './tables/analytics';
import type { CommentsTables } from './tables/comments';
import type { EventsTables } from './tables/events';
import type { ApiKeysTables } from './tables/api-keys';
import type { IdempotencyTables } from './tables/idempotency';
import type { MediaTables } from './tables/media';
import type { PostsTables } from './tables/posts';
import type { QuotaTables } from './tables/quota';
import type { UsersTables } from './tables/users';
import type { WebhooksTables } from './tables/webhooks';

/**
 * The database as Kysely sees it, composed from one file per feature in `tables/`. A feature adds its tables by
 * exporting `interface <Feature>Tables { table_name: Table }` there and extending the list below.
 * Migrations never use this type (they are typed `Kysely<any>`, the schema as it was when they were written).
 */
export interface Database extends UsersTables, ApiKeysTables, IdempotencyTables, AccountsTables, PostsTables, MediaTables, QuotaTables,
  AnalyticsTables, CommentsTables, EventsTables, WebhooksTables {}
