// Workflow timers (StartTimer / CancelTimer commands) on top of the scheduler.
import type { Engine } from './engine';
import { durationMs, type Msg } from './proto';
import type { Run } from './run';
import type { TimerState } from './run-state';
import { Due } from './scheduler';
import { deliverEvent } from './workflow-tasks';

/** A started timer, its own scheduler entry (one object for a waiting run's timer, issue 15). */
class PendingTimer extends Due implements TimerState {
  pendingFire: (() => void) | undefined = undefined;

  constructor(
    at: number,
    private readonly engine: Engine,
    private run: Run | undefined,
    readonly timerId: string,
    readonly startedEventId: number,
  ) {
    super(at);
  }

  fire(): void {
    if (this.run) fireTimer(this.engine, this.run, this);
  }

  /**
   * Lets go of the run: a cancelled timer stays in the scheduler's heap until it is due, and a week-long one of a
   * run that closed would keep the run for that week, past its retention.
   */
  override cancel(): void {
    super.cancel();
    this.run = undefined;
  }
}

export function startTimer(engine: Engine, run: Run, a: Msg, completedEventId: number): void {
  const timerId: string = a.timerId;
  const startedEventId = run.append(
    'TIMER_STARTED',
    { timerId, startToFireTimeout: a.startToFireTimeout, workflowTaskCompletedEventId: completedEventId },
    engine.now(),
  );
  const at = engine.now() + durationMs(a.startToFireTimeout);
  run.setTimer(engine.scheduler.schedule(new PendingTimer(at, engine, run, timerId, startedEventId)));
}

function fireTimer(engine: Engine, run: Run, fired: TimerState): void {
  const { timerId, startedEventId } = fired;
  if (run.timer(timerId) !== fired || !run.open) return;
  const append = () => {
    run.deleteTimer(timerId);
    run.append('TIMER_FIRED', { timerId, startedEventId }, engine.now());
  };
  fired.pendingFire = append;
  deliverEvent(engine, run, append);
}

export function cancelTimer(engine: Engine, run: Run, a: Msg, completedEventId: number): void {
  const timerId: string = a.timerId;
  const timer = run.timer(timerId);
  if (!timer) return;
  timer.cancel();
  // A fire that is still held back is withdrawn, as the real server does when the cancel wins the race.
  if (timer.pendingFire) run.withdrawHeld(timer.pendingFire);
  run.deleteTimer(timerId);
  run.append(
    'TIMER_CANCELED',
    { timerId, startedEventId: timer.startedEventId, workflowTaskCompletedEventId: completedEventId, identity: '' },
    engine.now(),
  );
}
