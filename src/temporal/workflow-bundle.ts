import { spawn } from 'node:child_process';
import { bundleWorkflowCode } from '@temporalio/worker';

/**
 * The worker's workflow bundle, built by webpack and swc in a short-lived child process rather than in Herald's own:
 * bundling in-process left webpack's module graph, swc's native library and the build's garbage in the long-lived
 * process (tens of MiB of PSS for as long as Herald runs, issue 15). The child prints the bundle and exits, so
 * everything it loaded goes back to the system; the worker gets the code (`workflowBundle: { code }`).
 *
 *   node <out>/src/temporal/workflow-bundle.js <workflowsPath>   prints the bundle's code on stdout
 */

const bundlerScript = __filename;

export function bundleWorkflowsInChild(workflowsPath: string): Promise<{ code: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundlerScript, workflowsPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => void (errors = (errors + chunk.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) return resolve({ code: Buffer.concat(out).toString('utf8') });
      reject(new Error(`bundling the workflows failed (exit ${code}): ${errors.trim()}`));
    });
  });
}

const quiet = () => undefined;
/** Only errors reach stderr (and so the parent's error message); stdout carries the bundle alone. */
const errorsOnly = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (message: string) => void process.stderr.write(`${message}\n`) };

async function printBundle(workflowsPath: string): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: errorsOnly });
  await new Promise<void>((done, fail) => process.stdout.write(code, (err) => (err ? fail(err) : done())));
}

if (require.main === module) {
  printBundle(process.argv[2]!).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
