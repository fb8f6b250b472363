// The scheduler under a burst: everything due at one instant (2,000 workflow timers at :00) fires in one pass.
import assert from 'node:assert/strict';
import { Clock } from '../clock';
import { Scheduler } from '../scheduler';

describe('temporal-dev: scheduler, a burst due at one instant', function () {
  it('fires 2,000 entries due at the same instant in one pass, in the order they were set, none early', async () => {
    const scheduler = new Scheduler(new Clock(false), () => false);
    const at = Date.now() + 50;
    const fired: Array<{ i: number; pass: number; now: number }> = [];
    let pass = 0;
    let passOpen = false;
    for (let i = 0; i < 2_000; i++) {
      scheduler.at(at, () => {
        // The first entry of a pass opens it; the pass is over once the current macrotask has ended.
        if (!passOpen) {
          passOpen = true;
          pass++;
          setImmediate(() => (passOpen = false));
        }
        fired.push({ i, pass, now: Date.now() });
      });
    }
    const late = scheduler.at(at + 60_000, () => assert.fail('not due yet'));
    await new Promise((done) => setTimeout(done, 200));
    late.cancel();
    scheduler.close();
    assert.equal(fired.length, 2_000);
    assert.deepEqual(new Set(fired.map((f) => f.pass)), new Set([1]), 'one pass');
    assert.deepEqual(fired.map((f) => f.i), Array.from({ length: 2_000 }, (_, i) => i));
    assert.ok(fired.every((f) => f.now >= at), 'none before its instant');
  });

  it('an entry set during a pass for a time already due runs in that pass or the next, never lost', async () => {
    const scheduler = new Scheduler(new Clock(false), () => false);
    const at = Date.now() + 20;
    const ran: string[] = [];
    scheduler.at(at, () => {
      ran.push('first');
      scheduler.at(at, () => ran.push('set while firing'));
    });
    scheduler.at(at, () => ran.push('second'));
    await new Promise((done) => setTimeout(done, 150));
    scheduler.close();
    assert.deepEqual(ran, ['first', 'second', 'set while firing']);
  });
});
