import { PlatformFailure } from '../types';
import { graphPath, type GraphClient } from './client';
import { platformNames } from './errors';

type GraphPlatform = 'facebook' | 'instagram' | 'threads';
/** The actions on an existing object whose 100/33 answer is checked (`goneConfirmed`). */
type ActionOnObject = 'delete' | 'delete_comment' | 'hide' | 'reply';

/** "<Platform> <refused ...>: <Platform> did not allow this connection to <...>; nothing was changed." */
const refusedWhileThere: Record<ActionOnObject, (name: string) => string> = {
  delete: (name) => `${name} refused to delete the post: ${name} did not allow this connection to delete it; nothing was changed.`,
  delete_comment: (name) => `${name} refused to delete the comment: ${name} did not allow this connection to delete it; nothing was changed.`,
  hide: (name) => `${name} refused to change the comment: ${name} did not allow this connection to change it; nothing was changed.`,
  reply: (name) => `${name} refused the reply: ${name} did not allow this connection to reply to this comment; nothing was changed.`,
};

/**
 * Runs an action on object `id` whose `gone` answer is believed only once confirmed. Graph answers code 100/33 for
 * "does not exist, cannot be loaded due to missing permissions, or does not support this operation", so that answer
 * alone is no proof: the object is read back, and only a read that cannot find it either lets `gone` through. A read
 * that finds it means the action was refused and nothing changed (`permanent`), never a live object recorded deleted.
 */
export async function goneConfirmed<T>(client: GraphClient, platform: GraphPlatform, id: string, action: ActionOnObject, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (refusal) {
    if (!(refusal instanceof PlatformFailure) || refusal.kind !== 'gone') throw refusal;
    const stillThere = await client.get(graphPath(id), { fields: 'id' }, action).then(
      () => true,
      (err: unknown) => {
        if (err instanceof PlatformFailure && err.kind === 'gone') return false;
        throw err;
      },
    );
    if (!stillThere) throw refusal;
    throw new PlatformFailure(platform, 'permanent', refusedWhileThere[action](platformNames[platform]), undefined, refusal.detail);
  }
}

/**
 * Deletes a post or comment and resolves once it is gone (adapters brief), confirmed by the platform
 * (`goneConfirmed`): a post is reported deleted only once the platform confirms (publishing-api.md).
 */
export async function deleteConfirmed(client: GraphClient, platform: GraphPlatform, id: string, action: 'delete' | 'delete_comment'): Promise<void> {
  await goneConfirmed(client, platform, id, action, () => client.delete(graphPath(id), action)).catch((err: unknown) => {
    // Already gone is what was asked for.
    if (err instanceof PlatformFailure && err.kind === 'gone') return;
    throw err;
  });
}
