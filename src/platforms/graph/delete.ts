import { PlatformFailure } from '../types';
import { graphPath, type GraphClient } from './client';
import { platformNames } from './errors';

const what = { delete: 'post', delete_comment: 'comment' } as const;

/**
 * Deletes a post or comment and resolves once it is gone (adapters brief), confirmed by the platform. Graph answers
 * code 100/33 for "does not exist, cannot be loaded due to missing permissions, or does not support this operation",
 * so that answer to a DELETE alone is no proof: the object is read back, and only a read that cannot find it either
 * means gone. A read that finds it means the delete was refused and nothing changed (publishing-api.md: a post is
 * reported deleted only once the platform confirms).
 */
export async function deleteConfirmed(client: GraphClient, platform: 'facebook' | 'instagram' | 'threads', id: string, action: 'delete' | 'delete_comment'): Promise<void> {
  const refusal = await client.delete(graphPath(id), action).then(
    () => null,
    (err: unknown) => err,
  );
  if (refusal === null) return;
  if (!(refusal instanceof PlatformFailure) || refusal.kind !== 'gone') throw refusal;
  const stillThere = await client.get(graphPath(id), { fields: 'id' }, action).then(
    () => true,
    (err: unknown) => {
      if (err instanceof PlatformFailure && err.kind === 'gone') return false;
      throw err;
    },
  );
  if (!stillThere) return;
  const name = platformNames[platform];
  throw new PlatformFailure(platform, 'permanent', `${name} refused to delete the ${what[action]}: ${name} did not allow this connection to delete it; nothing was changed.`, undefined, refusal.detail);
}
