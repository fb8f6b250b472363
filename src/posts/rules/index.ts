/**
 * The pure rules of posts and threads: request schemas, every validation rule, and the request-level validators the
 * posts service calls with the account rows and the user's plan. No I/O, no clock: `now` is a parameter.
 */
export * from './request-schemas';
export * from './response-schemas';
export { apiErrorFromZod, parseBody, formatPath } from './zod-error';
export * from './inputs';
export * from './violation';
export * from './warnings';
export { validatePostRequest, type RequestContext, type RequestValidation, type AccountPlanOf } from './validate-post';
export { validateThreadRequest } from './validate-thread';
export { validateUpdateRequest, applyUpdate, type UpdateContext, type UpdateValidation } from './validate-update';
export { checkUpdateRequest, type UpdateIntent, type EditablePost } from './update-request';
export { resolveAccountBody, resolveAccountThread, mediaSelectionOf, isUploadRef } from './resolve-account-body';
export { checkAccountPost, checkAccountThread, type AccountFindings } from './account-rules';
export { checkRequestedMedia, checkMediaContent, type MediaContent } from './media';
export { placementOf } from './placement';
export { parseScheduleAt, checkTimezone, checkScheduleInFuture, checkScheduleSpacing, scheduleInPastNotice } from './schedule';
export { textLength, textLimit, checkTextLength } from './text-length';
export { xWeightedLength } from './x-weighted-length';
export { extractLinks, containsLink, type LinkEntity } from './links';
export { xLinkOutcome, type XLinkItem, type XLinkOutcome } from './x-link-policy';
export { checkFirstComment } from './first-comment';
export { checkReplyText } from './reply';
export { accountPrefix } from './fan-out';
export { validateMediaContents, type AccountMediaContents } from './validate-media-content';
