// temporal-dev: a self-contained, in-memory Temporal-API-compatible server for development and tests,
// with a real-clock mode and a time-skipping mode (Temporal's TestService).
import { Engine } from './engine';
import { listen } from './grpc-server';
import { useHistoryDictionary } from './history-storage';
import { listenHttp } from './http-api';

export interface StartServerOptions {
  /** 0 = any free port. Default 7233. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Serve TestService and let time skip (as Temporal's time-skipping test server). Default false. */
  timeSkipping?: boolean;
  /** The namespace that exists at start. Default 'default'. */
  namespace?: string;
  /**
   * Also serve Temporal's HTTP API (/api/v1/..., as the Web UI calls it) on this port (0 = any free port), bound to
   * `http.host` (default: `host`), and, with `staticDir`, a built Web UI on the same origin.
   */
  http?: { port: number; host?: string; staticDir?: string };
  /**
   * The dictionary each named workflow type's histories are deflated against (histories like the ones to come, most
   * alike last: `useHistoryDictionary`), instead of the first history of that type the process deflated.
   */
  historyDictionaries?: Readonly<Record<string, Uint8Array>>;
}

export interface RunningServer {
  address: string;
  port: number;
  /** `http://host:port` of the HTTP API (and Web UI), when `http` was given. */
  httpUrl?: string;
  /**
   * Dictionaries given once the server runs (as `historyDictionaries`), for what is known only then: Herald's worker's
   * build id, written in every workflow task it completes. Histories deflated before keep theirs.
   */
  useHistoryDictionaries(dictionaries: Readonly<Record<string, Uint8Array>>): void;
  close(): Promise<void>;
}

function useHistoryDictionaries(dictionaries: Readonly<Record<string, Uint8Array>>): void {
  for (const [workflowType, bytes] of Object.entries(dictionaries)) useHistoryDictionary(workflowType, bytes);
}

export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const namespace = options.namespace ?? 'default';
  useHistoryDictionaries(options.historyDictionaries ?? {});
  const engine = new Engine({ timeSkipping: options.timeSkipping ?? false, namespace });
  const { server, port } = await listen(engine, host, options.port ?? 7233);
  const hostPort = (h: string, p: number) => `${h.includes(':') ? `[${h}]` : h}:${p}`;
  const address = hostPort(host, port);
  let http: Awaited<ReturnType<typeof listenHttp>> | undefined;
  if (options.http) {
    const httpHost = options.http.host ?? host;
    try {
      http = await listenHttp(engine, { host: httpHost, port: options.http.port, staticDir: options.http.staticDir, namespace });
    } catch (err) {
      engine.close();
      server.forceShutdown();
      throw err;
    }
  }
  let closed: Promise<void> | undefined;
  return {
    address,
    port,
    httpUrl: http ? `http://${hostPort(options.http!.host ?? host, http.port)}` : undefined,
    useHistoryDictionaries,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        engine.close();
        server.forceShutdown();
        if (!http) return resolve();
        http.server.close(() => resolve());
        http.server.closeAllConnections();
      })),
  };
}

const USAGE = `usage: temporal-dev <port>                       time-skipping test server (as @temporalio/testing launches it)
       temporal-dev --port N [--time-skipping] [--host H] [--namespace NS] [--http-port N]
       temporal-dev server start-dev --port N [--ip H] [--namespace NS]   (the CLI's dev-server arguments)`;

export function parseArgs(argv: string[]): StartServerOptions {
  if (argv.length === 1 && /^\d+$/.test(argv[0]!)) return { port: Number(argv[0]), timeSkipping: true };
  const options: StartServerOptions = { port: 7233, timeSkipping: false };
  const args = argv[0] === 'server' && argv[1] === 'start-dev' ? argv.slice(2) : argv;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = () => {
      const v = args[++i];
      if (v === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    if (arg === '--port' || arg === '-p') options.port = Number(value());
    else if (arg === '--time-skipping') options.timeSkipping = true;
    else if (arg === '--host' || arg === '--ip') options.host = value();
    else if (arg === '--namespace' || arg === '-n') options.namespace = value();
    else if (arg === '--http-port') options.http = { port: Number(value()) };
    else if (arg === '--help' || arg === '-h') throw new Error(USAGE);
    else if (arg.startsWith('--')) {
      // Dev-server flags without meaning here (--headless, --log-format ...) take a value unless boolean.
      if (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--') && arg !== '--headless') i++;
    } else throw new Error(`unexpected argument ${arg}\n${USAGE}`);
  }
  if (!Number.isInteger(options.port) || options.port! < 0 || options.port! > 65535) throw new Error(`bad port\n${USAGE}`);
  if (options.http && !(Number.isInteger(options.http.port) && options.http.port >= 0 && options.http.port <= 65535)) {
    throw new Error(`bad --http-port\n${USAGE}`);
  }
  return options;
}

/** Runs in the foreground until SIGINT/SIGTERM. Resolves with the running server (for tests). */
export async function runCli(argv: string[]): Promise<RunningServer> {
  const options = parseArgs(argv);
  // Handlers before the port opens: whoever sees us listening may signal at once, and a signal without a handler
  // kills the process (exit by signal, not 0) instead of closing the server.
  let server: RunningServer | undefined;
  const stop = () => {
    if (!server) process.exit(0);
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (argv.length === 1) exitWithParent();
  server = await startServer(options);
  const mode = options.timeSkipping ? 'time-skipping' : 'real clock';
  // Launched by @temporalio/testing (bare port argument): stay quiet, its output lands in test logs.
  if (!(argv.length === 1 && /^\d+$/.test(argv[0]!))) process.stderr.write(`temporal-dev listening on ${server.address} (${mode}, namespace ${options.namespace ?? 'default'})${server.httpUrl ? `, HTTP API on ${server.httpUrl}` : ''}\n`);
  return server;
}

/** Launched by a test process: never outlive it, even if it dies without killing us. */
function exitWithParent(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000).unref();
}
