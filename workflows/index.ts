// Every workflow the `herald` task queue runs is exported from this file (the worker bundles it).
// Workflow modules import only `@temporalio/workflow` and `import type` of activities.
export { publishPost } from './publish-post';
export { publishGroup } from './publish-group';
export { publishThread } from './publish-thread';
export { sendPendingFirstComment } from './first-comment';
export { syncComments } from './sync-comments';
export { keepCredentialAlive } from './keep-credential-alive';
export { deliverWebhook } from './deliver-webhook';
