// Workflow timers (StartTimer / CancelTimer commands) on top of the scheduler.
import type { Engine } from './engine';
import { durationMs, type Msg } from './proto';
import type { Run } from './run';
import { deliverEvent } from './workflow-tasks';

export function startTimer(engine: Engine, run: Run, a: Msg, completedEventId: number): void {
  const timerId: string = a.timerId;
  const startedEventId = run.append(
    'TIMER_STARTED',
    { timerId, startToFireTimeout: a.startToFireTimeout, workflowTaskCompletedEventId: completedEventId },
    engine.now(),
  );
  const handle = engine.scheduler.after(durationMs(a.startToFireTimeout), () => fireTimer(engine, run, timerId, startedEventId));
  run.setTimer({ timerId, startedEventId, handle });
}

function fireTimer(engine: Engine, run: Run, timerId: string, startedEventId: number): void {
  const timer = run.timer(timerId);
  if (!timer || timer.startedEventId !== startedEventId || !run.open) return;
  const append = () => {
    run.deleteTimer(timerId);
    run.append('TIMER_FIRED', { timerId, startedEventId }, engine.now());
  };
  timer.pendingFire = append;
  deliverEvent(engine, run, append);
}

export function cancelTimer(engine: Engine, run: Run, a: Msg, completedEventId: number): void {
  const timerId: string = a.timerId;
  const timer = run.timer(timerId);
  if (!timer) return;
  timer.handle.cancel();
  // A fire that is still held back is withdrawn, as the real server does when the cancel wins the race.
  if (timer.pendingFire) run.withdrawHeld(timer.pendingFire);
  run.deleteTimer(timerId);
  run.append(
    'TIMER_CANCELED',
    { timerId, startedEventId: timer.startedEventId, workflowTaskCompletedEventId: completedEventId, identity: '' },
    engine.now(),
  );
}
