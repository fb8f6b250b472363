import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createInstagramAdapter } from '../../src/platforms/instagram';
import { createThreadsAdapter } from '../../src/platforms/threads';
import type { AttemptHandle, MediaItem, PlatformAdapter, PlatformContext, PublishRequest } from '../../src/platforms/types';
import { failureOf } from '../standins/graph';
import { startInstagramStandIn } from '../standins/instagram';
import { startThreadsStandIn } from '../standins/threads';

/**
 * A lost publish of an Instagram or Threads container is settled from the container (`src/platforms/graph/containers.ts`):
 * within the call, and on the retry of an attempt that recorded it (`PublishRequest.attempt`, as the core keeps it in
 * `posts.publish_attempt_handle`). Here the attempt is kept in memory, as the core would hand it back.
 */

/** An attempt as the core keeps it: `earlier` what the call before recorded; `dies` makes the worker stop once it is stored. */
function attemptKept(earlier: string | null = null, dies = false): AttemptHandle & { stored: string[] } {
  const stored: string[] = [];
  return {
    earlier,
    stored,
    async record(handle) {
      stored.push(handle);
      if (dies) throw new Error('the worker stopped');
    },
  };
}

const image = (n: number): MediaItem => ({ data: Buffer.from('jpeg'), mimeType: 'image/jpeg', kind: 'image', publicUrl: `https://cdn.example/${n}.jpg` });
const unknownOutcome = (err: unknown) => failureOf(err).kind === 'unknown_outcome';

describe('graph containers: a lost publish settled from the container', () => {
  let http: HttpClient;
  beforeEach(() => {
    http = createHttpClient({ allowInsecure: true, timeoutMs: 1000 });
  });
  afterEach(async () => http.close());

  describe('instagram', () => {
    let ig: Awaited<ReturnType<typeof startInstagramStandIn>>;
    let adapter: PlatformAdapter;
    let ctx: PlatformContext;
    const story = (n: number, attempt?: AttemptHandle): PublishRequest => ({ postId: `s${n}`, text: '', media: [image(n)], configuration: { placement: 'story' }, attempt });
    const publishPath = () => `/v25.0/${ig.user.igUserId}/media_publish`;
    const stories = () => [...ig.media.values()].filter((m) => m.kind === 'story');

    beforeEach(async () => {
      ig = await startInstagramStandIn();
      adapter = createInstagramAdapter({ http, origin: ig.origin, facebookOrigin: ig.facebookOrigin, sleep: async () => undefined, containerPolling: { intervalMs: 1000, maxWaitMs: 3500 } });
      ctx = { credentials: { access_token: ig.user.igToken }, settings: { igUserId: ig.user.igUserId, via: 'instagram' } };
    });
    afterEach(async () => ig.stop());

    it('a story whose publish answer was lost is published with its id: the only story since publishing began, one story', async () => {
      // A story of the account from two hours before is not a candidate.
      ig.setClock(() => new Date(Date.now() - 2 * 3_600_000));
      await adapter.publish(ctx, story(1));
      ig.setClock(() => new Date());
      ig.standIn.inject({ method: 'POST', path: publishPath() }, { kind: 'reset', thenHandle: true });
      const published = await adapter.publish(ctx, story(2));
      const [, mine] = stories();
      assert.equal(stories().length, 2);
      assert.deepEqual(published, { platformPostId: mine.id, url: mine.permalink });
      assert.equal(ig.standIn.calls('POST', publishPath()).length, 2, 'the story made by hand, then ours once');
    });

    it('a story made by hand in the same minutes leaves a lost story unconfirmed: either could be it', async () => {
      await adapter.publish(ctx, story(1));
      ig.standIn.inject({ method: 'POST', path: publishPath() }, { kind: 'reset', thenHandle: true });
      await assert.rejects(adapter.publish(ctx, story(2)), unknownOutcome);
      assert.equal(stories().length, 2);
    });

    it('the retry of an attempt whose story went out finds it from the recorded container, nothing sent again', async () => {
      const first = attemptKept();
      const published = await adapter.publish(ctx, story(1, first));
      assert.equal(first.stored.length, 1, 'the container is recorded before it is published');
      // The worker stopped before the outcome was written: the retry gets the handle back.
      const found = await adapter.findPublished!(ctx, story(1, attemptKept(first.stored[0])));
      assert.deepEqual(found, published);
      assert.equal(stories().length, 1);
      assert.equal(ig.standIn.calls('POST', publishPath()).length, 1);
    });

    it('the retry of an attempt stopped before publishing publishes the same FINISHED container once: no second container', async () => {
      const first = attemptKept(null, true);
      await assert.rejects(adapter.publish(ctx, { postId: 'f1', text: 'Ready, never published', media: [image(1)], attempt: first }), /the worker stopped/);
      assert.deepEqual([ig.containers.size, ig.media.size], [1, 0]);
      const retry = attemptKept(first.stored[0]);
      const request: PublishRequest = { postId: 'f1', text: 'Ready, never published', media: [image(1)], attempt: retry, earlierAttemptOpen: true };
      assert.equal(await adapter.findPublished!(ctx, request), null, 'FINISHED: never published');
      const published = await adapter.publish(ctx, request);
      const [item] = [...ig.media.values()];
      assert.deepEqual([ig.containers.size, ig.media.size, item.containerId, published.platformPostId], [1, 1, [...ig.containers.keys()][0], item.id]);
      assert.equal(ig.standIn.calls('POST', publishPath()).length, 1);
    });

    it('the retry of a story attempt stopped before publishing publishes it: the container says it never went out', async () => {
      const first = attemptKept(null, true);
      await assert.rejects(adapter.publish(ctx, story(1, first)), /the worker stopped/);
      const request = story(1, attemptKept(first.stored[0]));
      assert.equal(await adapter.findPublished!(ctx, request), null);
      await adapter.publish(ctx, request);
      assert.deepEqual([ig.containers.size, stories().length], [1, 1]);
    });

    it('a recorded container that is no longer usable (EXPIRED) settles nothing: a story stays unconfirmed as before', async () => {
      const first = attemptKept(null, true);
      await assert.rejects(adapter.publish(ctx, story(1, first)), /the worker stopped/);
      [...ig.containers.values()][0].status = 'EXPIRED';
      await assert.rejects(adapter.findPublished!(ctx, story(1, attemptKept(first.stored[0]))), unknownOutcome);
      assert.equal(ig.media.size, 0);
    });
  });

  describe('threads', () => {
    let th: Awaited<ReturnType<typeof startThreadsStandIn>>;
    let adapter: PlatformAdapter;
    let ctx: PlatformContext;

    beforeEach(async () => {
      th = await startThreadsStandIn();
      adapter = createThreadsAdapter({ http, origin: th.origin, sleep: async () => undefined, containerPolling: { intervalMs: 2000, maxWaitMs: 5000 } });
      ctx = { credentials: { access_token: th.user.token }, settings: { threadsUserId: th.user.id } };
    });
    afterEach(async () => th.stop());

    it('the retry of an attempt stopped before publishing publishes the same FINISHED container once', async () => {
      const first = attemptKept(null, true);
      await assert.rejects(adapter.publish(ctx, { postId: 't1', text: 'Ready on Threads', media: [], attempt: first }), /the worker stopped/);
      const request: PublishRequest = { postId: 't1', text: 'Ready on Threads', media: [], attempt: attemptKept(first.stored[0]) };
      assert.equal(await adapter.findPublished!(ctx, request), null);
      const published = await adapter.publish(ctx, request);
      assert.deepEqual([th.containers.size, th.posts.size], [1, 1]);
      assert.equal(th.posts.get(published.platformPostId)?.containerId, [...th.containers.keys()][0]);
    });

    it('the retry of an attempt whose post without text went out is not sent again: PUBLISHED, named by nothing, it stays unconfirmed', async () => {
      const first = attemptKept();
      await adapter.publish(ctx, { postId: 't2', text: '', media: [image(1)], attempt: first });
      await assert.rejects(adapter.findPublished!(ctx, { postId: 't2', text: '', media: [image(1)], attempt: attemptKept(first.stored[0]) }), unknownOutcome);
      await assert.rejects(adapter.publish(ctx, { postId: 't2', text: '', media: [image(1)], attempt: attemptKept(first.stored[0]) }), unknownOutcome);
      assert.equal(th.posts.size, 1);
    });
  });
});
