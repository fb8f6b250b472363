import { spacingClashViolation } from './rules/schedule';
import { toApiError } from './rules/violation';

/**
 * The spacing rule (`checkScheduleSpacing`) judges the account's scheduled times read before the write. Two requests
 * for one account at the same moment each read before the other wrote; the database's constraint
 * (`posts_scheduled_spacing`, migration 0230) then fails the second write, with nothing written. The write is tried
 * again from its read: the rule now sees the post that won and refuses with its own message (naming the time it
 * clashes with and, in a fan-out, the account). Only a third request winning each time keeps clashing; after
 * `attempts` it is refused with the rule's sentence without the clash's time.
 *
 * Two such writes can also wait for each other (two fan-outs naming the same accounts in different orders, each
 * having written one row the other's clashes with): PostgreSQL ends one as a deadlock, with nothing of it written,
 * and that one is judged again the same way.
 */
export async function againOnSpacingClash<T>(validateAndWrite: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await validateAndWrite();
    } catch (err) {
      if (!isSpacingClash(err)) throw err;
      if (attempt >= attempts) {
        throw toApiError(spacingClashViolation());
      }
    }
  }
}

const exclusionViolation = '23P01';
const deadlockDetected = '40P01';

function isSpacingClash(err: unknown): boolean {
  const { code, constraint } = (err ?? {}) as { code?: string; constraint?: string };
  return (code === exclusionViolation && constraint === 'posts_scheduled_spacing') || code === deadlockDetected;
}
