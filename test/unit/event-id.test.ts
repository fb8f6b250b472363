import assert from 'node:assert/strict';
import { newEventId } from '../../src/events/outbox';

describe('Event ids', () => {
  it('are evt_ + 26 Crockford base32 characters, increasing even within one millisecond', () => {
    // Ahead of any id this process made already (the generator never goes back in time).
    const at = Date.now() + 10_000;
    const ids = Array.from({ length: 50 }, () => newEventId(at));
    for (const id of ids) assert.match(id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(newEventId(at + 1) > ids[ids.length - 1]);
    assert.ok(newEventId(at + 2).slice(0, 14) > ids[0].slice(0, 14), 'the time part leads');
  });
});
