import { z } from 'zod';
import { CreateThreadBodySchema, ThreadFanOutResponseSchema, ThreadSchema } from '../../src/posts/rules';
import { answerMadeThreads, createThreads, type MadeThreads } from '../../src/threads/create';
import { defineRoute } from '../route';
import { creationErrors, postsRuntimeOf } from './posts';
import { createdThreadAnswer } from './posts-answers';

const data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });

export const threadsRoutes = [
  defineRoute({
    method: 'post',
    path: '/threads',
    summary: 'Publish, schedule or draft a thread',
    description:
      'Parts publish in order as a reply chain (standalone posts where the platform has none), all or nothing: if a part fails, the published ones are deleted again and nothing is kept. The first comment goes under the last part. `account_ids` fans out (201 when every thread succeeded, 207 otherwise).',
    tags: ['Threads'],
    scope: 'posts:write',
    body: CreateThreadBodySchema,
    idempotent: true,
    responses: {
      201: { description: 'The thread (single account) or the fan-out result', schema: z.union([data(ThreadSchema), data(ThreadFanOutResponseSchema)]) },
      207: { description: 'Fan-out where at least one account failed', schema: data(ThreadFanOutResponseSchema) },
    },
    errors: [...creationErrors, 'thread_rollback_incomplete'],
    handler: async ({ body, auth, deps }) => createdThreadAnswer(await createThreads(postsRuntimeOf(deps), auth.userId, body)),
    resume: async ({ made, deps }) => createdThreadAnswer(await answerMadeThreads(postsRuntimeOf(deps), made as MadeThreads)),
  }),
];
