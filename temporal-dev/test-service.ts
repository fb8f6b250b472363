// temporal.api.testservice.v1.TestService, as @temporalio/testing's time-skipping environment calls it.
import type { Engine } from './engine';
import { durationMs, timestamp, timestampMs, type Msg } from './proto';
import type { Handler } from './workflow-service';

function sleepUntil(engine: Engine, at: number): Promise<void> {
  return new Promise((resolve) => {
    if (engine.now() >= at) return resolve();
    engine.scheduler.at(at, resolve);
  });
}

/** env.sleep(): time may skip while waiting, whatever the lock counter says (the caller asks for time to pass). */
async function sleepWithSkipping(engine: Engine, at: number): Promise<Msg> {
  engine.clock.sleepers++;
  engine.scheduler.poke();
  try {
    await sleepUntil(engine, at);
  } finally {
    engine.clock.sleepers--;
  }
  return {};
}

export function testServiceHandlers(engine: Engine): Record<string, Handler> {
  return {
    LockTimeSkipping: () => {
      engine.clock.lock();
      return {};
    },
    UnlockTimeSkipping: () => {
      engine.clock.unlock();
      engine.scheduler.poke();
      return {};
    },
    GetCurrentTime: () => ({ time: timestamp(engine.now()) }),
    Sleep: async (req) => {
      await sleepUntil(engine, engine.now() + durationMs(req.duration));
      return {};
    },
    SleepUntil: async (req) => {
      await sleepUntil(engine, timestampMs(req.timestamp) ?? engine.now());
      return {};
    },
    UnlockTimeSkippingWithSleep: (req) => sleepWithSkipping(engine, engine.now() + durationMs(req.duration)),
  };
}
