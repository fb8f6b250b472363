/**
 * Records Herald's history dictionaries (`src/temporal/history-dictionaries.ts`) from real runs of the current
 * workflows (`history-shapes.ts`). Not a test: run again when a workflow's history changes shape (the test
 * `test/temporal-worker/history-dictionaries.test.ts` says when), from the checkout's root after a build:
 *
 *   node dist/test/helpers/record-history-dictionaries.js [dir for the raw histories]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { POSTS_TASK_QUEUE } from '../../src/posts/runtime';
import { startPostsHarness } from '../posts/harness';
import { recordHistoryShapes, type RecordedHistory } from './history-shapes';

const OUT = 'src/temporal/history-dictionaries-recorded.ts';

async function main(): Promise<void> {
  // Production's task queue name, as every history of Herald's repeats it.
  const h = await startPostsHarness({ plan: 'pro', taskQueue: POSTS_TASK_QUEUE });
  try {
    const shapes = await recordHistoryShapes(h);
    const rawDir = process.argv[2];
    if (rawDir) {
      mkdirSync(rawDir, { recursive: true });
      const write = (name: string, history: RecordedHistory) => writeFileSync(join(rawDir, `${name}.json`), JSON.stringify({ ...history, bytes: history.bytes.toString('base64') }));
      for (const [name, history] of Object.entries(shapes)) write(name, history);
      // A second of each (other ids), to measure the dictionaries against.
      for (const [name, history] of Object.entries(await recordHistoryShapes(h))) write(`${name}-2`, history);
    }
    // What waits longest goes last: zlib's back-references to the end of a dictionary are the shortest.
    const recorded = {
      publishPost: Buffer.concat([shapes.immediatePost.bytes, shapes.scheduledPost.bytes]),
      publishThread: shapes.scheduledThread.bytes,
      publishGroup: shapes.immediateGroup.bytes,
    };
    const lines = Object.entries(recorded).map(([type, bytes]) => `  ${type}:\n    '${bytes.toString('base64').match(/.{1,104}/g)!.join("' +\n    '")}',`);
    writeFileSync(
      OUT,
      `// Recorded by test/helpers/record-history-dictionaries.ts on ${new Date().toISOString().slice(0, 10)}: do not edit by hand.\n` +
        `export const RECORDED_HISTORIES: Readonly<Record<string, string>> = {\n${lines.join('\n')}\n};\n`,
    );
    console.log(Object.entries(shapes).map(([name, history]) => `${name} ${history.bytes.length} bytes`).join(', '));
  } finally {
    await h.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
