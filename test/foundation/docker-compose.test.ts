import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../src/config';
import { packageRoot } from '../../src/package-root';

/**
 * docker-compose.yml as Herald reads it (no Docker engine here to run it): the `herald` service's environment is a
 * configuration `src/config.ts` accepts, and `herald posts stuck` run inside it links the Temporal Web UI the file
 * publishes. Read with a small reader of the file's own shape (two-space YAML, `KEY: value` lines), not a YAML
 * library, which Herald does not depend on.
 */

const compose = readFileSync(path.join(packageRoot, 'docker-compose.yml'), 'utf8');

/** The lines of one top-level service, without comments. */
function serviceLines(name: string): string[] {
  const lines = compose.split('\n');
  const start = lines.indexOf(`  ${name}:`);
  assert.ok(start >= 0, `service ${name}`);
  const end = lines.findIndex((line, i) => i > start && /^ {0,2}\S/.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).filter((line) => !/^\s*(#|$)/.test(line));
}

/** A service's `environment:` map, with `${VAR:?message}` read from `given`. */
function environmentOf(name: string, given: Record<string, string>): Record<string, string> {
  const lines = serviceLines(name);
  const env: Record<string, string> = {};
  for (const line of lines.slice(lines.indexOf('    environment:') + 1)) {
    const entry = /^ {6}([A-Z_]+): (.*)$/.exec(line);
    if (!entry) break;
    env[entry[1]] = entry[2].replace(/^\$\{([A-Z_]+):\?[^}]*\}$/, (_, variable: string) => given[variable] ?? '');
  }
  return env;
}

describe('docker-compose.yml', () => {
  const env = environmentOf('herald', { HERALD_ENCRYPTION_KEY: 'a'.repeat(64), HERALD_PUBLIC_URL: 'https://herald.example.com' });

  it("gives Herald a production configuration it accepts, pointed at the compose network's Temporal", () => {
    const config = parseConfig(env);
    assert.equal(config.env, 'production');
    assert.equal(config.temporal.address, 'temporal:7233');
    assert.match(config.databaseUrl ?? '', /^postgres:\/\/herald:herald@postgres:5432\/herald$/);
  });

  it('links `herald posts stuck` to the Web UI it publishes, as a browser on the machine reaches it', () => {
    const published = serviceLines('temporal-ui')
      .map((line) => /^ {6}- "(127\.0\.0\.1):(\d+):8080"$/.exec(line))
      .find(Boolean);
    assert.ok(published, 'the UI is published on loopback');
    assert.equal(parseConfig(env).temporalWebUiUrl, `http://${published[1]}:${published[2]}`);
  });
});
