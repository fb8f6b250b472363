import { lookedUp } from '../lookup';
import { PlatformFailure, type AttemptHandle, type PostLink } from '../types';
import type { GraphClient } from './client';
import { graphPath } from './client';
import { platformNames } from './errors';
import { beforeCreate, pauseUnlessStopped } from '../send-stop';

/**
 * The container flow Instagram and Threads share (protocols.md sections 6 and 7): create a container, poll its
 * status until FINISHED (every container of one post against one deadline, with the injected sleep), then publish it. Publishing is where a post appears, so
 * a lost answer there is settled by reading the container again, as Meta's troubleshooting advice says: FINISHED
 * means it was not used (publishing it is safe), PUBLISHED means the post exists and `lookup` finds its media id
 * (Meta documents no field or call that gives it from the container). Neither read classifies (`lookedUp`).
 *
 * The container is recorded with the attempt before it is published (`PublishRequest.attempt`), so a retry of an
 * attempt whose call never reported back settles it the same way (`earlierContainer`) instead of searching blind.
 */

type ContainerStatus = 'FINISHED' | 'IN_PROGRESS' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';

export interface ContainerFlow {
  client: GraphClient;
  platform: 'instagram' | 'threads';
  userId: string;
  /** Edge that creates containers (`media` / `threads`) and the one that publishes them. */
  createEdge: string;
  publishEdge: string;
  /** Field holding the status (`status_code` on Instagram, `status` on Threads) and the fields read with it. */
  statusField: string;
  statusFields: string;
  /** Worded reason for an ERROR container, from its status body. */
  describeError: (body: Record<string, unknown>) => string;
  sleep: (ms: number) => Promise<void>;
  now: () => Date;
  poll: ContainerPolling;
  /** When this post's containers must all be FINISHED (epoch ms): one deadline for the whole flow (`flowDeadline`). */
  deadline: number;
  /** The call's `PublishRequest.signal`: no publish begins once it is aborted, and the status polls end on it. */
  stop?: AbortSignal;
}

export interface ContainerPolling {
  intervalMs: number;
  /**
   * How long one post waits for all its containers together (carousel children and parent alike). The platforms
   * recommend at most five minutes, well under the platform call's activity timeout (`workflows/post-steps.ts`, 10
   * minutes); past that limit less a minute the call's stop ends the polls and no publish begins (`ContainerFlow.stop`).
   */
  maxWaitMs: number;
}

export const defaultContainerPolling: ContainerPolling = { intervalMs: 5_000, maxWaitMs: 5 * 60_000 };

/** The deadline of a publish flow starting now. */
export function flowDeadline(now: () => Date, poll: ContainerPolling): number {
  return now().getTime() + poll.maxWaitMs;
}

export async function createContainer(flow: ContainerFlow, fields: Record<string, string | undefined>): Promise<string> {
  // A container is invisible until published, so a lost answer here is only a retry (the orphan expires in 24 h).
  const res = await flow.client.post<{ id: string }>(graphPath(flow.userId, flow.createEdge), fields, 'publish');
  return res.id;
}

async function readStatus(flow: ContainerFlow, containerId: string): Promise<{ status: ContainerStatus; body: Record<string, unknown> }> {
  const body = await flow.client.get<Record<string, unknown>>(graphPath(containerId), { fields: flow.statusFields }, 'publish');
  return { status: body[flow.statusField] as ContainerStatus, body };
}

/**
 * Resolves once every container can be published, reading the statuses of those still processing together each
 * round; throws a worded `permanent` failure for one that failed or expired, or that is not ready by the flow's
 * deadline (publish was never called, so nothing was published).
 */
export async function waitForContainers(flow: ContainerFlow, containerIds: string[]): Promise<void> {
  const name = platformNames[flow.platform];
  let pending = containerIds;
  for (;;) {
    const reads = await Promise.all(pending.map(async (id) => ({ id, ...(await readStatus(flow, id)) })));
    for (const { status, body } of reads) {
      if (status === 'ERROR') throw new PlatformFailure(flow.platform, 'permanent', `${name} refused the post: ${flow.describeError(body)}.`, undefined, { body: JSON.stringify(body).slice(0, 2000) });
      if (status === 'EXPIRED') throw new PlatformFailure(flow.platform, 'permanent', `${name} refused the post: the media container expired before publishing.`);
    }
    pending = reads.filter((r) => r.status !== 'FINISHED' && r.status !== 'PUBLISHED').map((r) => r.id);
    if (pending.length === 0) return;
    // The next read would come after the deadline.
    if (flow.now().getTime() + flow.poll.intervalMs > flow.deadline) {
      throw new PlatformFailure(flow.platform, 'permanent', `${name} was still processing the media after ${durationOf(flow.poll.maxWaitMs)}; nothing was published. Send the same request again.`);
    }
    await pauseUnlessStopped(flow.platform, flow.sleep, flow.poll.intervalMs, flow.stop);
  }
}

const durationOf = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${ms / 1000} seconds`);

/**
 * Finds the media a container known PUBLISHED became; `since`: when its publishing began (epoch ms, the adapter's
 * clock). Null when it cannot tell which.
 */
type PublishedLookup = (since: number) => Promise<string | null>;

/** What the flow records with its attempt (`AttemptHandle`): the container about to be published and when. */
interface ContainerHandle {
  container: string;
  since: number;
}

const HANDLE_KIND = 'graph-container';

function containerHandleOf(handle: string | null | undefined): ContainerHandle | null {
  if (!handle) return null;
  try {
    const parsed = JSON.parse(handle) as { kind?: unknown; container?: unknown; since?: unknown };
    return parsed.kind === HANDLE_KIND && typeof parsed.container === 'string' && typeof parsed.since === 'number' ? { container: parsed.container, since: parsed.since } : null;
  } catch {
    return null;
  }
}

/**
 * Publishes a FINISHED container and returns the media id, recording the container with the attempt first. When the
 * answer is lost the container's status settles it: FINISHED is published (the same container, so never two posts),
 * PUBLISHED is looked up (`lookup`); anything else keeps the lost answer.
 */
export async function publishContainer(flow: ContainerFlow, containerId: string, lookup: PublishedLookup, attempt?: AttemptHandle): Promise<string> {
  beforeCreate(flow.platform, flow.stop);
  const handle: ContainerHandle = { container: containerId, since: flow.now().getTime() };
  await attempt?.record(JSON.stringify({ kind: HANDLE_KIND, ...handle }));
  const publish = () => flow.client.post<{ id: string }>(graphPath(flow.userId, flow.publishEdge), { creation_id: containerId }, 'publish', { creates: true });
  try {
    return (await publish()).id;
  } catch (err) {
    if (!(err instanceof PlatformFailure) || err.kind !== 'unknown_outcome') throw err;
    const { status } = await lookedUp(err, () => readStatus(flow, containerId));
    // Its time up, the repeat is not sent; the lost answer stands, with the container recorded for the next attempt.
    if (status === 'FINISHED' && flow.stop?.aborted) throw err;
    if (status === 'FINISHED') return (await publish()).id;
    const found = status === 'PUBLISHED' ? await lookedUp(err, () => lookup(handle.since)) : null;
    if (found) return found;
    throw err;
  }
}

/**
 * The container an earlier call of this attempt recorded before publishing and never reported on (`attempt.earlier`),
 * read again: `published`, the media it became (PUBLISHED and found by `lookup`); `ready`, a container FINISHED and so
 * never published, which the retry publishes rather than making a second one; null when it settles nothing (no
 * container recorded, or ERROR, EXPIRED, IN_PROGRESS): the caller goes on as without it. A container PUBLISHED whose
 * media `lookup` cannot name is `unknown_outcome` (`lost`): it is live, so nothing may be sent again. A failed status
 * read throws as the client classified it (nothing is known published).
 */
export async function earlierContainer(flow: ContainerFlow, attempt: AttemptHandle | undefined, lookup: PublishedLookup, lost: () => PlatformFailure): Promise<{ published: string } | { ready: string } | null> {
  const handle = containerHandleOf(attempt?.earlier);
  if (!handle) return null;
  const { status } = await readStatus(flow, handle.container);
  if (status === 'FINISHED') return { ready: handle.container };
  if (status !== 'PUBLISHED') return null;
  // It is live: a lookup that fails or names nothing leaves it unconfirmed, never sent again (`lookedUp`).
  const unconfirmed = lost();
  const found = await lookedUp(unconfirmed, () => lookup(handle.since));
  if (!found) throw unconfirmed;
  return { published: found };
}

interface PublishingQuota {
  usage: number;
  total: number;
}

/** `content_publishing_limit` / `threads_publishing_limit`: `{ data: [{ <usageField>, <configField>: { quota_total } }] }`. */
export async function readPublishingQuota(client: GraphClient, userId: string, edge: string, usageField: string, configField: string): Promise<PublishingQuota | null> {
  const res = await client.get<{ data?: Array<Record<string, any>> }>(graphPath(userId, edge), { fields: `${usageField},${configField}` }, 'publish');
  const entry = res.data?.[0];
  const usage = Number(entry?.[usageField]);
  const total = Number(entry?.[configField]?.quota_total);
  return Number.isFinite(usage) && Number.isFinite(total) ? { usage, total } : null;
}

export function assertQuotaLeft(platform: 'instagram' | 'threads', quota: PublishingQuota | null, what: string): void {
  if (!quota || quota.usage < quota.total) return;
  throw new PlatformFailure(platform, 'rate_limited', `${platformNames[platform]} allows ${quota.total} API-published ${what} per 24 hours and this account has reached that limit.`);
}

/** A published media's link; null where the platform gives none (a story may have none, copyright-flagged media has none). */
export async function readPermalink(client: GraphClient, mediaId: string): Promise<string | null> {
  const media = await client.get<{ permalink?: string }>(graphPath(mediaId), { fields: 'permalink' }, 'publish');
  return media.permalink ?? null;
}

/**
 * The link of media just published. A read that fails never fails the post: the link is then `urlUnread`, which a
 * later `GET /api/v1/posts/{id}` asks for once more, unlike one the platform answered it does not have.
 */
export async function publishedLinkOf(client: GraphClient, mediaId: string): Promise<PostLink> {
  return readPermalink(client, mediaId).then(
    (url) => ({ url }),
    () => ({ url: null, urlUnread: true }),
  );
}
