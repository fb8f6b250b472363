/**
 * The pure rules of posts and threads: request schemas, every validation rule, and the request-level validators the
 * posts service calls with the account rows and the user's plan. No I/O, no clock: `now` is a parameter.
 */
export * from './request-schemas';
export * from './response-schemas';
export * from './inputs';
export * from './violation';
export * from './warnings';
export { validatePostRequest, type AccountPlanOf } from './validate-post';
export { validateThreadRequest } from './validate-thread';
export { validateUpdateRequest, type UpdateValidation } from './validate-update';
export { checkUpdateRequest, type EditablePost } from './update-request';
export { mediaSelectionOf, isUploadRef } from './resolve-account-body';
export { xLinkOutcome } from './x-link-policy';
export { checkReplyText } from './reply';
export { accountPrefix } from './fan-out';
export { validateMediaContents } from './validate-media-content';
export { mediaItemPath } from './media';
