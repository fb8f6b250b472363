import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { ApiError } from '../errors';
import type { Logger } from '../logger';

/**
 * The API's HTTP server (`npm start`, `src/main.ts`): listening, and closing at shutdown within the requests' share of
 * the budget, answering 503 those still waiting when it is spent.
 */
interface HttpServer {
  server: Server;
  /** Stops accepting connections; resolves once every connection is closed (see `closeServer`). */
  close(withinMs: number, logger: Logger): Promise<void>;
}

/** Listens on `port` and `host` (port 0: any free one), keeping the responses in flight for the shutdown. */
export async function listenHttp(app: RequestListener, port: number, host: string): Promise<HttpServer> {
  const server = createServer(app);
  const inFlight = trackResponses(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, close: (withinMs, logger) => closeServer(server, inFlight, withinMs, logger) };
}

/** The responses not yet finished, for the shutdown to answer those it cuts (`closeServer`). */
function trackResponses(server: Server): Set<ServerResponse> {
  const open = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    open.add(res);
    res.once('close', () => open.delete(res));
  });
  return open;
}

/** How long the answers written at the shutdown's cap get to leave before every connection is closed. */
const cutAnswerFlushMs = 1_000;

/**
 * Stops accepting connections and resolves once in-flight requests have been answered, or after `withinMs`, when
 * those still waiting (an immediate publish whose platform is slow) are cut: what they were doing is in their rows,
 * and the shutdown must leave time for the rest. A cut request whose answer has not begun gets 503 with the envelope
 * and Retry-After (its client asks again, with its Idempotency-Key, of the Herald that comes back); one whose answer
 * was being written can only be closed.
 */
function closeServer(server: Server, inFlight: ReadonlySet<ServerResponse>, withinMs: number, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    const cut = setTimeout(() => {
      const unanswered = [...inFlight].filter((res) => !res.headersSent);
      logger.warn({ withinMs, answered: unanswered.length, closed: inFlight.size - unanswered.length }, 'requests still in flight at the shutdown budget: answered 503 and their connections closed');
      const sent = unanswered.map((res) => answerShuttingDown(res));
      const flushed = setTimeout(() => server.closeAllConnections(), cutAnswerFlushMs);
      flushed.unref();
      void Promise.all(sent).then(() => {
        clearTimeout(flushed);
        server.closeAllConnections();
      });
    }, withinMs);
    cut.unref();
    server.close((err) => {
      clearTimeout(cut);
      if (err) reject(err);
      else resolve();
    });
    server.closeIdleConnections();
  });
}

/** Seconds a client cut at shutdown is told to wait: a supervisor's restart of Herald takes about this long. */
const shuttingDownRetryAfterSeconds = 5;

/** The cut request's answer; resolves once it is written (or its connection is gone). */
function answerShuttingDown(res: ServerResponse): Promise<void> {
  const error = new ApiError(
    'service_unavailable',
    'Herald stopped before this request was answered; what it started is recorded on the resource or completed by Herald when it is back: read the resource, or send the request again (with the same Idempotency-Key) then',
  );
  const body = JSON.stringify(error.toEnvelope());
  return new Promise((resolve) => {
    res.once('close', () => resolve());
    res.writeHead(503, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Retry-After': String(shuttingDownRetryAfterSeconds),
      Connection: 'close',
    });
    res.end(body, () => resolve());
  });
}
