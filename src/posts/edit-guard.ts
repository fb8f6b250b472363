import { ApiError } from '../errors';

/** The row an edit read was written before the edit's own write (`editPost`): nothing of the edit was written. */
export class ChangedSinceRead extends Error {
  constructor() {
    super('the post was written between the edit\'s read and its write');
    this.name = 'ChangedSinceRead';
  }
}

/**
 * An edit is planned from its read of the row (every rule, the media it prepares, the charges it replaces, the columns
 * it writes back) and written only over that row (`editPost`, on the row's version). One written meanwhile (another
 * edit, a reschedule, a hide, a claim) is read again and the request judged again from it, so only what the request
 * sends changes and the rest is what the other write left; a row no longer editable is then refused by the rules
 * with their sentence. Only other writes winning each time keep it from writing: after `attempts` reads, each
 * overtaken, 409 `post_not_editable` (the contract's code for an edit the post's changes refuse).
 */
export async function againOnChangedRow<T>(readAndEdit: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readAndEdit();
    } catch (err) {
      if (!(err instanceof ChangedSinceRead)) throw err;
      if (attempt >= attempts) throw new ApiError('post_not_editable', 'The post kept changing while it was being edited; read it again');
    }
  }
}
