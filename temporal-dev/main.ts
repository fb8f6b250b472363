// CLI entry: `node temporal-dev/main.js <port>` (time-skipping, as @temporalio/testing starts an existing-path
// test server) or `--port N [--time-skipping]`.
import { runCli } from './index';

runCli(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
