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
});
