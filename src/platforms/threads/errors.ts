import { PlatformFailure } from '../types';

/**
 * Threads-specific answers on top of the shared Graph table (`../graph/errors.ts`): the `error_message` of a
 * container in ERROR (protocols.md section 7), and the delete refusal of connections made before `threads_delete`.
 */
const containerErrors: Record<string, string> = {
  FAILED_DOWNLOADING_VIDEO: 'Threads could not download the video',
  FAILED_PROCESSING_AUDIO: 'Threads could not process the audio',
  FAILED_PROCESSING_VIDEO: 'Threads could not process the video',
  INVALID_ASPEC_RATIO: 'the media aspect ratio is not one Threads accepts',
  INVALID_BIT_RATE: 'the video bit rate is not one Threads accepts',
  INVALID_DURATION: 'the video is longer or shorter than Threads accepts',
  INVALID_FRAME_RATE: 'the video frame rate is not one Threads accepts',
  INVALID_AUDIO_CHANNELS: 'the number of audio channels is not one Threads accepts',
  INVALID_AUDIO_CHANNEL_LAYOUT: 'the audio channel layout is not one Threads accepts',
};

export function describeContainerError(body: Record<string, unknown>): string {
  return containerErrors[String(body.error_message)] ?? 'Threads could not process the media';
}

/**
 * A delete refused for want of permission: connections made before Herald asked for `threads_delete` cannot delete.
 * Permanent, not `reauthorize`: the connection still publishes, so it must not be treated as lost.
 */
export function deletePermissionFailure(cause: PlatformFailure): PlatformFailure {
  return new PlatformFailure(
    'threads', 'permanent',
    'Threads refused to delete the post: this connection was made without the permission to delete posts; reconnect the account to allow deletes.',
    undefined, cause.detail,
  );
}
