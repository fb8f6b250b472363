import type { ContainerFlow } from '../graph/containers';
import { createContainer, waitForContainers } from '../graph/containers';
import { PlatformFailure, type PublishRequest } from '../types';
import { carouselFields, containerFields, type Placement } from './mapper';

/**
 * Builds the container a post publishes from: one container for a single image, a story or a reel; for several
 * items, a child container per item (`is_carousel_item`), all FINISHED, and a CAROUSEL parent naming them.
 * Returns the id of a container ready to publish.
 */
export async function buildContainer(flow: ContainerFlow, req: PublishRequest, placement: Placement): Promise<string> {
  const options = req.configuration ?? {};
  if (req.media.length === 0) throw new PlatformFailure('instagram', 'permanent', 'Instagram refused the post: Instagram needs an image or a video.');
  if (req.media.length === 1 || placement !== 'feed') {
    const id = await createContainer(flow, containerFields(req.media[0], placement, req.text, options));
    await waitForContainers(flow, [id]);
    return id;
  }
  // Children are created first and then waited for together: processing runs in parallel on Instagram's side.
  const childIds: string[] = [];
  for (const [i, item] of req.media.entries()) {
    // User tags go on the first image of a carousel; Instagram carries them per child, not on the parent.
    const childOptions = i === 0 ? options : { ...options, user_tags: undefined };
    childIds.push(await createContainer(flow, containerFields(item, placement, req.text, childOptions, true)));
  }
  await waitForContainers(flow, childIds);
  const parent = await createContainer(flow, carouselFields(childIds, req.text, options));
  await waitForContainers(flow, [parent]);
  return parent;
}
