import path from 'node:path';
import ts from 'typescript';

/**
 * `herald/no-import-cycles`: a module that, through its imports, imports itself. Such loops make load order matter and
 * tie layers together that should not know each other (issue 12 found `activities → src/posts/cancel → workflow client
 * → workflows → activities`). Type-only imports count too, as `madge --circular` counts them: a loop of types is
 * still a loop of knowledge. Dynamic `import()` does not (it is how a module is loaded late on purpose).
 * Reads the TypeScript program the type-aware lint already built; the import graph is computed once per program.
 */

const graphs = new WeakMap();

/** file name -> [{ target, node }] for every static import or re-export of a project file. */
function importGraph(program) {
  let graph = graphs.get(program);
  if (graph) return graph;
  graph = { edges: new Map(), componentOf: new Map() };
  graphs.set(program, graph);
  const options = program.getCompilerOptions();
  const files = program.getSourceFiles().filter((f) => !f.isDeclarationFile && !f.fileName.includes('/node_modules/'));
  const known = new Set(files.map((f) => f.fileName));
  for (const file of files) {
    const edges = [];
    for (const statement of file.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
          ? statement.moduleSpecifier
          : undefined;
      if (!specifier) continue;
      const target = ts.resolveModuleName(specifier.text, file.fileName, options, ts.sys).resolvedModule?.resolvedFileName;
      if (target && known.has(target)) edges.push({ target, node: statement });
    }
    graph.edges.set(file.fileName, edges);
  }
  // Tarjan's strongly connected components: every file of a component larger than one is on a cycle.
  let counter = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const connect = (v) => {
    indexOf.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const { target: w } of graph.edges.get(v)) {
      if (!indexOf.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), indexOf.get(w)));
      }
    }
    if (low.get(v) !== indexOf.get(v)) return;
    const component = new Set();
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.add(w);
    } while (w !== v);
    if (component.size > 1) for (const member of component) graph.componentOf.set(member, component);
  };
  for (const file of files) if (!indexOf.has(file.fileName)) connect(file.fileName);
  return graph;
}

/** The shortest way back from `start` to `home` inside one component, as file names. */
function pathBack(graph, start, home, component) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    if (v === home) break;
    for (const { target } of graph.edges.get(v)) {
      if (component.has(target) && !previous.has(target)) {
        previous.set(target, v);
        queue.push(target);
      }
    }
  }
  const steps = [];
  for (let v = home; v !== null && v !== undefined; v = previous.get(v)) steps.unshift(v);
  return steps;
}

export const noImportCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'No module imports itself through other modules' },
    schema: [],
    messages: { cycle: 'Import cycle: {{cycle}}' },
  },
  create(context) {
    const program = context.sourceCode.parserServices?.program;
    if (!program) return {};
    return {
      Program() {
        const file = program.getSourceFile(context.filename);
        if (!file) return;
        const graph = importGraph(program);
        const component = graph.componentOf.get(file.fileName);
        if (!component) return;
        const edge = graph.edges.get(file.fileName).find((e) => component.has(e.target));
        const relative = (name) => path.relative(context.cwd, name).split(path.sep).join('/');
        const cycle = [file.fileName, ...pathBack(graph, edge.target, file.fileName, component)].map(relative).join(' → ');
        const { line, character } = file.getLineAndCharacterOfPosition(edge.node.getStart(file));
        context.report({ loc: { line: line + 1, column: character }, messageId: 'cycle', data: { cycle } });
      },
    };
  },
};
