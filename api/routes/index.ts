import type { AnyRoute } from '../route';
import { accountsRoutes } from './accounts';
import { analyticsRoutes } from './analytics';
import { commentsRoutes } from './comments';
import { commentActionRoutes } from './comment-actions';
import { eventsRoutes } from './events';
import { keysRoutes } from './keys';
import { mediaRoutes } from './media';
import { postsRoutes } from './posts';
import { postsListRoutes } from './posts-list';
import { threadsRoutes } from './threads';
import { webhooksRoutes } from './webhooks';

/** Every `/api/v1` route. A feature adds its routes by listing its module's array here. */
export const apiRoutes: readonly AnyRoute[] = [...keysRoutes, ...accountsRoutes, ...postsListRoutes, ...postsRoutes, ...threadsRoutes, ...analyticsRoutes, ...commentActionRoutes, ...commentsRoutes, ...eventsRoutes, ...webhooksRoutes, ...mediaRoutes];
