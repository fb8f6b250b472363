import tseslint from 'typescript-eslint';
import { noImportCycles } from './eslint.no-import-cycles.mjs';
import { noUnusedExports } from './eslint.no-unused-exports.mjs';

/**
 * The rules the design states and review alone could not keep (README "Linting"). Few on purpose: each one guards a
 * property of the product, and the type-aware ones share one TypeScript program (tsconfig.json), built once per run.
 */
export default tseslint.config(
  { ignores: ['temporal-ui/**', 'dist/', '.build/', 'node_modules/', '.data/'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { '@typescript-eslint': tseslint.plugin, herald: { rules: { 'no-unused-exports': noUnusedExports, 'no-import-cycles': noImportCycles } } },
    rules: {
      // A promise nobody awaits loses its failure: an unhandled rejection, or a step that silently never happened.
      '@typescript-eslint/no-floating-promises': 'error',
      'herald/no-import-cycles': 'error',
      'herald/no-unused-exports': [
        'error',
        // Loaded by node, mocha or bin/herald rather than imported.
        { entries: ['\\.test\\.ts$', '^src/main\\.ts$', '^src/cli/main\\.ts$', '^temporal-dev/main\\.ts$', '^test/standins/main\\.ts$', '^bench/'] },
      ],
    },
  },
  {
    // Our Temporal-compatible dev server is a tool beside the product, and its engine modules call each other by design.
    files: ['temporal-dev/**/*.ts'],
    rules: { 'herald/no-import-cycles': 'off' },
  },
  {
    // Workflow code is replayed in Temporal's sandbox: it must be deterministic, so it may reach only the workflow
    // API and other workflow files; anything else (activities, services, config) it may know as types only.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./[^/]+$)',
              allowTypeImports: true,
              message: 'Workflows may import only @temporalio/workflow and other workflow files; anything else as `import type`.',
            },
          ],
        },
      ],
    },
  },
);
