import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Structured JSON logs on stdout (or the given stream). */
export function createLogger(level: pino.LevelWithSilent, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'herald' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination as pino.DestinationStream,
  );
}

/**
 * The service's logger on stdout, buffered: lines are written in batches of up to 4 KiB, at the latest 200 ms after
 * they were logged, instead of one write(2) per line (one per request for the access log). On exit, crash included,
 * pino flushes what is buffered synchronously; only a SIGKILL loses the last 200 ms of lines.
 */
export function createStdoutLogger(level: pino.LevelWithSilent): Logger {
  return createLogger(level, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 200 }));
}
