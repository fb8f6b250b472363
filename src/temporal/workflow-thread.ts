/**
 * The worker's workflow thread (started by `PipelinedWorkflowCreator.create`): the SDK's own, with its promise hook
 * replaced before the SDK installs it (`lazy-promise-stacks.ts`). The SDK's module refuses to load on a main thread.
 */
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { installLazyPromiseStacks } from './lazy-promise-stacks';

installLazyPromiseStacks(globalHandlers);
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after the hook is in place, for its side effects
require('@temporalio/worker/lib/workflow/workflow-worker-thread');
