import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';

/**
 * The project's ESLint rules (`eslint.config.mjs`) on a small project of their own, so each rule is seen to catch what
 * it is there for, and to let pass what it must (the whole tree is linted by `npm test` itself).
 */
const config = path.resolve('eslint.config.mjs');

const files: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', types: [] }, include: ['**/*.ts'] }),
  'src/service.ts': ["export interface Service { run(): Promise<void> }", "export const used = 1;", "export const orphan = 2;", "export async function run(): Promise<void> {}"].join('\n'),
  'src/caller.ts': [
    "import { run, used, type Service } from './service';",
    'export function start(service: Service): number {',
    '  run();',
    '  void service.run();',
    '  return used;',
    '}',
  ].join('\n'),
  'src/main.ts': "import { start } from './caller';\nexport const loadedByNode = start;",
  'workflows/index.ts': [
    "import { sleep } from '@temporalio/workflow';",
    "import type { Service } from '../src/service';",
    "import { used } from '../src/service';",
    "import { step } from './step';",
    'export async function flow(_s?: Service): Promise<number> {',
    '  await sleep(1);',
    '  return step() + used;',
    '}',
  ].join('\n'),
  'src/loop-a.ts': "import { b } from './loop-b';\nexport const a = (): number => b() + 1;",
  'src/loop-b.ts': "import type { a } from './loop-a';\nexport const b = (): number => 1;\nexport type A = typeof a;",
  'workflows/step.ts': 'export function step(): number {\n  return 1;\n}',
  'workflows/load.ts': "export const workflowsPath = require.resolve('./index');",
};

describe('lint rules (eslint.config.mjs)', () => {
  let dir: string;
  let results: Map<string, string[]>;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'herald-lint-'));
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), text + '\n');
    }
    await mkdir(path.join(dir, 'node_modules', '@temporalio'), { recursive: true });
    await writeFile(path.join(dir, 'node_modules', '@temporalio', 'workflow.d.ts'), 'export declare function sleep(ms: number): Promise<void>;\n');
    const eslint = new ESLint({
      cwd: dir,
      overrideConfigFile: config,
      overrideConfig: { languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: dir } } },
    });
    results = new Map();
    for (const result of await eslint.lintFiles(['src/**/*.ts', 'workflows/**/*.ts'])) {
      results.set(path.relative(dir, result.filePath), result.messages.map((m) => `${m.line} ${m.ruleId}: ${m.message}`));
    }
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('finds an export no other file imports, and only that one', () => {
    assert.deepEqual(results.get('src/service.ts'), ['3 herald/no-unused-exports: "orphan" is exported but no other file imports it: remove the export (or the code).']);
  });

  it('finds a promise nobody awaits, and lets an explicitly ignored one pass', () => {
    assert.deepEqual(results.get('src/caller.ts')?.map((m) => m.split(':')[0]), ['3 @typescript-eslint/no-floating-promises']);
  });

  it('lets a workflow import the workflow API, workflow files and types only', () => {
    const found = results.get('workflows/index.ts') ?? [];
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0], /^3 @typescript-eslint\/no-restricted-imports: '\.\.\/src\/service' import is restricted .*Workflows may import only @temporalio\/workflow/);
  });

  it('finds an import cycle, type-only imports included, in each file on it', () => {
    assert.deepEqual(results.get('src/loop-a.ts'), ['1 herald/no-import-cycles: Import cycle: src/loop-a.ts → src/loop-b.ts → src/loop-a.ts']);
    assert.deepEqual(results.get('src/loop-b.ts'), [
      '1 herald/no-import-cycles: Import cycle: src/loop-b.ts → src/loop-a.ts → src/loop-b.ts',
      '3 herald/no-unused-exports: "A" is exported but no other file imports it: remove the export (or the code).',
    ]);
  });

  it('counts a module loaded whole by require.resolve as used, and skips entry points', () => {
    assert.deepEqual(results.get('workflows/step.ts'), []);
    assert.deepEqual(results.get('src/main.ts'), []);
    assert.deepEqual(results.get('workflows/load.ts'), ['1 herald/no-unused-exports: "workflowsPath" is exported but no other file imports it: remove the export (or the code).']);
  });
});
