import assert from 'node:assert/strict';
import { InstantGate } from '../../src/posts/instant-gate';

const settledWithin = async (p: Promise<void>, ms: number) =>
  await Promise.race([p.then(() => true), new Promise<boolean>((done) => setTimeout(() => done(false), ms))]);

describe('InstantGate: held posts report once their instant is sent (issue 15, burst)', () => {
  it('a post that left waits for the others of its instant, not for another instant', async () => {
    const gate = new InstantGate();
    const first = gate.enter(1_000);
    const second = gate.enter(1_000);
    const elsewhere = gate.enter(2_000);
    first.leave();
    assert.equal(await settledWithin(first.othersLeft(10_000), 50), false, 'the second post of the instant is not sent yet');
    second.leave();
    assert.equal(await settledWithin(first.othersLeft(10_000), 50), true);
    assert.equal(await settledWithin(second.othersLeft(10_000), 50), true);
    assert.equal(await settledWithin(elsewhere.othersLeft(10_000), 50), false, 'another instant is its own');
    elsewhere.leave();
  });

  it('waits at most maxWaitMs for a post that is slow to leave, and leaving twice counts once', async () => {
    const gate = new InstantGate();
    const quick = gate.enter(1_000);
    const slow = gate.enter(1_000);
    quick.leave();
    quick.leave();
    const started = Date.now();
    await quick.othersLeft(100);
    assert.ok(Date.now() - started >= 90, 'waited for the slow post up to the bound');
    assert.equal(await settledWithin(quick.othersLeft(10_000), 50), false, 'leaving twice did not count for the slow post');
    slow.leave();
    assert.equal(await settledWithin(quick.othersLeft(10_000), 50), true);
  });

  it('an instant whose posts all left starts afresh for a later hold', async () => {
    const gate = new InstantGate();
    const early = gate.enter(1_000);
    early.leave();
    const late = gate.enter(1_000);
    const later = gate.enter(1_000);
    late.leave();
    assert.equal(await settledWithin(late.othersLeft(10_000), 50), false, 'the later hold waits for its own instant-mate');
    later.leave();
    assert.equal(await settledWithin(late.othersLeft(10_000), 50), true);
  });

  it('the holds of one instant wake in the same turn of the event loop, however far apart they started', async () => {
    const gate = new InstantGate();
    const signal = new AbortController().signal;
    const turns: number[] = [];
    let turn = 0;
    const ticking = setInterval(() => turn++, 0);
    const first = gate.enter(5_000);
    const woken = [first.untilDue(60, signal).then(() => turns.push(turn))];
    await new Promise((done) => setTimeout(done, 25));
    const second = gate.enter(5_000);
    // Its own delay would end 25 ms later; it joins the instant's wake-up instead.
    woken.push(second.untilDue(60, signal).then(() => turns.push(turn)));
    await Promise.all(woken);
    clearInterval(ticking);
    assert.equal(new Set(turns).size, 1, `woken in turns ${turns.join(', ')}`);
    first.leave();
    second.leave();
  });

  it("a hold whose signal aborts rejects as an aborted timer does; the instant's others still wake", async () => {
    const gate = new InstantGate();
    const cancelled = new AbortController();
    const leaving = gate.enter(7_000);
    const staying = gate.enter(7_000);
    const aborted = leaving.untilDue(50, cancelled.signal);
    const woken = staying.untilDue(50, new AbortController().signal);
    cancelled.abort('WORKER_SHUTDOWN');
    await assert.rejects(aborted, { name: 'AbortError' });
    leaving.leave();
    await woken;
    staying.leave();
    const already = new AbortController();
    already.abort();
    await assert.rejects(gate.enter(8_000).untilDue(10, already.signal), { name: 'AbortError' });
  });

  it('an instant every hold left before it came keeps no timer (a worker shutting down exits at once)', async () => {
    const gate = new InstantGate();
    const cancelled = new AbortController();
    const held = gate.enter(9_000);
    const waiting = held.untilDue(3_600_000, cancelled.signal);
    cancelled.abort();
    await assert.rejects(waiting);
    held.leave();
    const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = timers();
    const anotherHour = gate.enter(9_500);
    void anotherHour.untilDue(3_600_000, new AbortController().signal);
    assert.equal(timers(), before + 1, 'a timer is counted here while a hold waits');
    anotherHour.leave();
    assert.equal(timers(), before, 'and gone once its last hold left');
  });
});
