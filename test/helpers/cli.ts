/**
 * The operator command in the test's own process:
 *
 *   runCli(args, env): Promise<{ code, stdout }>
 *     `herald <args>` (src/cli/main.ts `runHerald`) with `env` set for the call only (an empty string is a variable
 *     set empty, which the config reads as unset); what it wrote to stdout, and its exit code.
 */
import { runHerald } from '../../src/cli/main';

export async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const write = process.stdout.write.bind(process.stdout);
  let stdout = '';
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  }) as typeof process.stdout.write;
  try {
    return { code: await runHerald(args), stdout };
  } finally {
    process.stdout.write = write;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
