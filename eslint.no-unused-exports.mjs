import path from 'node:path';
import ts from 'typescript';

/**
 * `herald/no-unused-exports`: an export no other file imports is dead code or a module boundary drawn in the wrong
 * place. `import/no-unused-modules` does this job but needs the legacy config system; this rule reads the one
 * TypeScript program the type-aware lint already built, so it costs one walk of the program per lint run.
 *
 * A name counts as used when another file imports it (`import`, `import type`, `export ... from`), and every export
 * of a module counts as used when a file takes the module whole: `import * as`, `export * from`, `import('...')`,
 * `require('...')`, `require.resolve('...')` (how the Temporal worker loads `workflows/`). Entry points (option
 * `entries`: regular expressions on the path relative to the project root) are loaded by something outside the
 * program (node, mocha, bin/herald), so their exports are not checked.
 */

const ALL = '*';
const indexes = new WeakMap();

/** file name -> names imported from it by other files (ALL: every export). Built once per program. */
function usageIndex(program) {
  let index = indexes.get(program);
  if (index) return index;
  index = new Map();
  indexes.set(program, index);
  const checker = program.getTypeChecker();

  const use = (specifier, names, from) => {
    const module = checker.getSymbolAtLocation(specifier);
    // The checker resolves import and export specifiers; `require.resolve('...')` is resolved as TypeScript would.
    const fileName =
      module?.declarations?.find(ts.isSourceFile)?.fileName ??
      ts.resolveModuleName(specifier.text, from.fileName, program.getCompilerOptions(), ts.sys).resolvedModule?.resolvedFileName;
    if (!fileName || fileName === from.fileName) return;
    const set = index.get(fileName) ?? new Set();
    index.set(fileName, set);
    for (const name of names) set.add(name);
  };

  const visit = (node, from) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (clause) {
        const names = clause.name ? ['default'] : [];
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) names.push(ALL);
        if (bindings && ts.isNamedImports(bindings)) names.push(...bindings.elements.map((e) => (e.propertyName ?? e.name).text));
        use(node.moduleSpecifier, names, from);
      }
      return;
    }
    if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const clause = node.exportClause;
      const names = clause && ts.isNamedExports(clause) ? clause.elements.map((e) => (e.propertyName ?? e.name).text) : [ALL];
      use(node.moduleSpecifier, names, from);
      return;
    }
    if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      use(node.moduleReference.expression, [ALL], from);
      return;
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      use(node.argument.literal, [node.qualifier ? qualifierHead(node.qualifier) : ALL], from);
    }
    if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0]) && loadsModule(node.expression)) {
      use(node.arguments[0], [ALL], from);
    }
    ts.forEachChild(node, (child) => visit(child, from));
  };

  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || file.fileName.includes('/node_modules/')) continue;
    ts.forEachChild(file, (child) => visit(child, file));
  }
  return index;
}

function qualifierHead(name) {
  return ts.isIdentifier(name) ? name.text : qualifierHead(name.left);
}

/** `import(...)`, `require(...)`, `require.resolve(...)`. */
function loadsModule(callee) {
  if (callee.kind === ts.SyntaxKind.ImportKeyword) return true;
  if (ts.isIdentifier(callee)) return callee.text === 'require';
  return ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'require' && callee.name.text === 'resolve';
}

/** ESLint's 1-based line and 0-based column of a position in the program's copy of the file. */
function position(file, pos) {
  const { line, character } = file.getLineAndCharacterOfPosition(pos);
  return { line: line + 1, column: character };
}

export const noUnusedExports = {
  meta: {
    type: 'problem',
    docs: { description: 'Every export is imported by another file (entry points excepted)' },
    schema: [{ type: 'object', properties: { entries: { type: 'array', items: { type: 'string' } } }, additionalProperties: false }],
    messages: { unused: '"{{name}}" is exported but no other file imports it: remove the export (or the code).' },
  },
  create(context) {
    const program = context.sourceCode.parserServices?.program;
    if (!program) return {};
    const relative = path.relative(context.cwd, context.filename).split(path.sep).join('/');
    const entries = (context.options[0]?.entries ?? []).map((pattern) => new RegExp(pattern));
    if (entries.some((entry) => entry.test(relative))) return {};
    return {
      Program() {
        const file = program.getSourceFile(context.filename);
        const checker = program.getTypeChecker();
        const module = file && checker.getSymbolAtLocation(file);
        if (!module) return;
        const used = usageIndex(program).get(file.fileName) ?? new Set();
        if (used.has(ALL)) return;
        for (const symbol of checker.getExportsOfModule(module)) {
          const name = symbol.escapedName.toString();
          if (used.has(name)) continue;
          const declaration = symbol.declarations?.find((d) => d.getSourceFile() === file);
          if (!declaration) continue; // arrives through `export * from`: judged in its own file
          const node = ts.getNameOfDeclaration(declaration) ?? declaration;
          context.report({
            loc: { start: position(file, node.getStart(file)), end: position(file, node.getEnd()) },
            messageId: 'unused',
            data: { name },
          });
        }
      },
    };
  },
};
