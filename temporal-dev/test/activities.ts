// Activities for the temporal-dev suite. Each is tiny and does exactly what one test needs.
import { ApplicationFailure, CancelledFailure, CompleteAsyncError, Context, sleep } from '@temporalio/activity';

export async function greet(name: string): Promise<string> {
  return `Hello, ${name}!`;
}

/** Fails with a retryable error until attempt `succeedOnAttempt`, then reports the attempt it succeeded on. */
export async function flaky(succeedOnAttempt: number): Promise<number> {
  const { attempt } = Context.current().info;
  if (attempt < succeedOnAttempt) throw new Error(`flaky failure on attempt ${attempt}`);
  return attempt;
}

export async function failNonRetryable(message: string): Promise<never> {
  throw ApplicationFailure.nonRetryable(message, 'BadInput', { detail: 1 });
}

export async function alwaysFails(): Promise<never> {
  throw ApplicationFailure.create({ message: 'always fails', type: 'Flaky' });
}

/** Sleeps longer than any timeout the tests give it. */
export async function sleepy(ms: number): Promise<string> {
  await sleep(ms);
  return 'woke up';
}

/** Heartbeats until cancelled; reports how it ended. */
export async function heartbeatUntilCancelled(): Promise<string> {
  const ctx = Context.current();
  for (;;) {
    ctx.heartbeat('beat');
    try {
      await ctx.sleep(100);
    } catch (err) {
      if (err instanceof CancelledFailure) throw err;
      throw err;
    }
  }
}

/** Heartbeats once with its progress, then stops heartbeating (to trip the heartbeat timeout). */
export async function heartbeatOnceThenHang(): Promise<string> {
  const ctx = Context.current();
  const previous = ctx.info.heartbeatDetails as number | undefined;
  ctx.heartbeat((previous ?? 0) + 1);
  await sleep(60_000);
  return 'never';
}

/** Leaves its completion to someone else (the test, through the client). */
export async function completesLater(): Promise<string> {
  throw new CompleteAsyncError();
}
