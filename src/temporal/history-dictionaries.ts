// Herald's history dictionaries for temporal-dev (issue 15): each of its workflow types' histories, as a scheduled
// post's waits for a week, is kept deflated against a dictionary of histories like it. Left to itself temporal-dev
// takes the first history of a type it deflates, which is whatever ran first after a start: an immediate post's
// closed history, say, against which a waiting scheduled post's deflates to ~380 bytes instead of ~230. These are
// recorded from real runs of the current workflows (`test/helpers/record-history-dictionaries.ts`), so every process
// deflates against the same bytes whatever it ran first; a workflow whose history changes shape keeps working (a
// dictionary only makes deflating better or worse), and `test/temporal-worker/history-dictionaries.test.ts` says
// when it is time to record them again.
import { hostname } from 'node:os';
import { RECORDED_HISTORIES } from './history-dictionaries-recorded';

/**
 * Each recorded history, then this process's identity as the SDK's client and worker name themselves in every
 * history (`pid@host`, three to four times in each; the recorder's is another pid): ~10 bytes less a history. Then,
 * once the worker exists, its build id (`@temporalio/worker@<version>+<the bundle's hash>`, in every completed
 * workflow task): the recorded one is stale after any change to any workflow's code, which cost ~70 bytes a history.
 */
export function historyDictionaries(workerBuildId = ''): Record<string, Buffer> {
  const ours = Buffer.from(`${process.pid}@${hostname()}${workerBuildId}`);
  return Object.fromEntries(Object.entries(RECORDED_HISTORIES).map(([workflowType, base64]) => [workflowType, Buffer.concat([Buffer.from(base64, 'base64'), ours])]));
}
