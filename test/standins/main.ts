/**
 * `npm run standins`: every platform stand-in on a local port, for development by hand. Prints their origins and
 * the environment that points `npm start` at them and the connect body of each demo account, then runs until
 * SIGINT/SIGTERM.
 */
import { standIns } from './registry';

const envNames: Record<string, string> = {
  x: 'HERALD_X_API_URL',
  telegram: 'HERALD_TELEGRAM_API_URL',
  facebook: 'HERALD_FACEBOOK_API_URL',
  instagram: 'HERALD_INSTAGRAM_API_URL',
  threads: 'HERALD_THREADS_API_URL',
  linkedin: 'HERALD_LINKEDIN_API_URL',
};

async function main(): Promise<void> {
  const running = await Promise.all(Object.entries(standIns).map(async ([slug, start]) => [slug, await start()] as const));
  const origins = Object.fromEntries(running.map(([slug, standIn]) => [slug, standIn.origin]));
  process.stdout.write(`${JSON.stringify({ origins }, null, 2)}\n\n`);
  process.stdout.write('# Point Herald at them (Bluesky and Mastodon are per account: service_url / instance_url):\n');
  process.stdout.write('export HERALD_ALLOW_INSECURE_URLS=true\n');
  for (const [slug, name] of Object.entries(envNames)) process.stdout.write(`export ${name}=${origins[slug]}\n`);
  process.stdout.write('\n# Each stand-in has one demo account; connect it with its body (POST /api/v1/accounts):\n');
  for (const [slug, standIn] of running) process.stdout.write(`# ${slug}: ${JSON.stringify(standIn.connect)}\n`);
  const stop = async () => {
    await Promise.all(running.map(([, standIn]) => standIn.stop()));
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

void main();
