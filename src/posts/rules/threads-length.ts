import { emojiFinder } from './emoji';

/**
 * Threads' length (protocols.md section 7, Meta's posts reference): characters, except that "emojis are counted as the
 * number of UTF-8 bytes", the whole sequence (👍 4, ❤️ 6, a ZWJ family 25). Everything else counts one per code point.
 */
const findEmoji = emojiFinder();

export function threadsLength(text: string): number {
  let length = [...text].length;
  for (const { start, end } of findEmoji(text)) {
    const emoji = text.slice(start, end);
    length += Buffer.byteLength(emoji, 'utf8') - [...emoji].length;
  }
  return length;
}
