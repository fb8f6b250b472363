import { sleep } from '@temporalio/workflow';

/** Workflows for `activation-watch.test.ts`. Never use these as a model: `spinForever` is the bug being caught. */

export async function answerSoon(): Promise<string> {
  await sleep(1);
  return 'answered';
}

export async function spinForever(): Promise<void> {
  // An endless synchronous loop, as a bug in workflow code would be: no await, so the workflow thread never returns.
  for (;;) {
    if (Math.random() > 2) break;
  }
}
