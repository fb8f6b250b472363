import { proxyLocalActivities, proxySinks, sleep, type Sinks } from '@temporalio/workflow';

/** Workflows for `pipelined-workflows.test.ts`: sink calls, local activities and timers, in every activation. */

export interface RecorderSinks extends Sinks {
  recorder: { record(line: string): void };
}

const { recorder } = proxySinks<RecorderSinks>();
const { echo } = proxyLocalActivities<{ echo(value: string): Promise<string> }>({ startToCloseTimeout: '10 seconds' });

export async function recordEveryStep(name: string, steps: number): Promise<string[]> {
  const answers: string[] = [];
  for (let step = 0; step < steps; step++) {
    recorder.record(`${name} ${step}`);
    answers.push(await echo(`${name} ${step}`));
    await sleep(1);
  }
  recorder.record(`${name} done`);
  return answers;
}
