import { condition, sleep } from '@temporalio/workflow';

/** Workflows for `promise-stacks.test.ts`: a workflow waiting in every way a stack trace query has to show. */

export async function waitsInManyWays(): Promise<void> {
  await Promise.all([waitForADay(), waitForNothing(), raceOfTwo(), thenChain(), Promise.allSettled([waitInsideAllSettled()])]);
}

async function waitForADay(): Promise<void> {
  await sleep('1 day');
}

async function waitForNothing(): Promise<void> {
  await condition(() => false);
}

async function raceOfTwo(): Promise<void> {
  await Promise.race([sleep('2 days'), condition(() => false)]);
}

function thenChain(): Promise<void> {
  return sleep('3 days').then(() => sleep('4 days'));
}

async function waitInsideAllSettled(): Promise<void> {
  await Promise.any([sleep('5 days')]);
}
