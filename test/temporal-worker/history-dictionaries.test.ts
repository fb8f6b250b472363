// Herald's history dictionaries (issue 15, `src/temporal/history-dictionaries.ts`): temporal-dev started as Herald
// starts it deflates today's real histories, made through the API and the worker, small whatever ran first. A
// failure here after a workflow change means the recorded histories no longer fit: record them again
// (`test/helpers/record-history-dictionaries.ts`).
import assert from 'node:assert/strict';
import { POSTS_TASK_QUEUE } from '../../src/posts/runtime';
import { historyDictionaries } from '../../src/temporal/history-dictionaries';
import { startServer } from '../../temporal-dev';
import { deflateHistory } from '../../temporal-dev/history-storage';
import { recordHistoryShapes, type HistoryShapes, type RecordedHistory } from '../helpers/history-shapes';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

describe("Herald's history dictionaries for temporal-dev", function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let shapes: HistoryShapes;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro', taskQueue: POSTS_TASK_QUEUE });
    shapes = await recordHistoryShapes(h);
  });
  after(() => h?.stop());

  it("deflates a waiting scheduled post's history to ~0.24 KiB even when an immediate post's was deflated first", async () => {
    // As Herald's main gives its embedded temporal-dev the dictionaries once its worker exists (they are the
    // process's, not the server's). The worker's build id changes with any workflow's code: without it here every
    // history read ~70 bytes more after such a change, and this test failed until the histories were recorded again.
    const server = await startServer({ port: 0 });
    server.useHistoryDictionaries(historyDictionaries(h.workerBuildId));
    await server.close();
    const size = (workflowType: string, history: RecordedHistory) => deflateHistory(workflowType, history.own, history.bytes, history.ends, []).length;
    // In this order a type's first history would have been its dictionary: the immediate post's, against which a
    // scheduled post's deflated to ~360 bytes here (~175 against a scheduled post's made the same second). Against the
    // recorded ones, made in another process at another time, each event's time differs: 214-245 bytes measured.
    const sizes = {
      immediatePost: size('publishPost', shapes.immediatePost),
      scheduledPost: size('publishPost', shapes.scheduledPost),
      immediateGroup: size('publishGroup', shapes.immediateGroup),
      scheduledThread: size('publishThread', shapes.scheduledThread),
    };
    const raw = Object.fromEntries(Object.entries(shapes).map(([name, history]) => [name, history.bytes.length]));
    const message = `deflated ${JSON.stringify(sizes)} of ${JSON.stringify(raw)}`;
    // Measured 214-245, 251-264, 324-354, 336-395 bytes (four recordings); with no dictionary 716-951.
    assert.ok(sizes.scheduledPost <= 300, message);
    assert.ok(sizes.immediatePost <= 320, message);
    assert.ok(sizes.scheduledThread <= 420, message);
    assert.ok(sizes.immediateGroup <= 480, message);
  });
});
