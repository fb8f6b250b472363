// Who holds what a process kept between two heap snapshots of it (issue 15, "memory per waiting post"): reads two
// `.heapsnapshot` files of the same process (e.g. `bench/memory.ts --heap-snapshots`, idle and with posts waiting)
// and prints
//  1. the objects alive in the second and not in the first (V8 keeps an object's snapshot id across snapshots of one
//     process), by constructor or kind: count and self size;
//  2. their holders: every new object is charged to the nearest object that already existed in the first snapshot
//     and reaches it (breadth first over strong edges from the old objects), so a Map that grew by 10,000 entries
//     shows as that Map, with its path from a GC root.
// A snapshot holds live objects only (V8 collects before writing it), so garbage is not counted.
// Usage: node --max-old-space-size=8000 <out>/bench/heap-diff.js before.heapsnapshot after.heapsnapshot [top=25]
import { readFileSync } from 'node:fs';

interface Snapshot {
  nodeFieldCount: number;
  edgeFieldCount: number;
  nodes: Uint32Array;
  edges: Uint32Array;
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  /** Index in `edges` of each node's first edge (by node ordinal). */
  firstEdge: Uint32Array;
}

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

// Field offsets (V8's layout: type, name, id, self_size, edge_count, ...; edges: type, name_or_index, to_node).
const N_TYPE = 0;
const N_NAME = 1;
const N_ID = 2;
const N_SIZE = 3;
const N_EDGES = 4;
const E_TYPE = 0;
const E_NAME = 1;
const E_TO = 2;

function load(file: string): Snapshot {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as RawSnapshot;
  const meta = raw.snapshot.meta;
  const nodeFieldCount = meta.node_fields.length;
  const edgeFieldCount = meta.edge_fields.length;
  const nodes = Uint32Array.from(raw.nodes);
  const edges = Uint32Array.from(raw.edges);
  const count = nodes.length / nodeFieldCount;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * nodeFieldCount + N_EDGES]! * edgeFieldCount;
    firstEdge[i + 1] = e;
  }
  return { nodeFieldCount, edgeFieldCount, nodes, edges, strings: raw.strings, nodeTypes: meta.node_types[0], edgeTypes: meta.edge_types[0], firstEdge };
}

const nodeCount = (s: Snapshot) => s.nodes.length / s.nodeFieldCount;
const field = (s: Snapshot, ordinal: number, offset: number) => s.nodes[ordinal * s.nodeFieldCount + offset]!;

/** What a node is: its constructor for objects, `(kind) name` for the rest (closures by function name). */
function label(s: Snapshot, ordinal: number): string {
  const type = s.nodeTypes[field(s, ordinal, N_TYPE)]!;
  const name = s.strings[field(s, ordinal, N_NAME)]!;
  if (type === 'object' || type === 'native') return name.length > 60 ? `${name.slice(0, 60)}…` : name;
  if (type === 'closure') return `(closure) ${name || '(anonymous)'}`;
  if (type === 'hidden' || type === 'code' || type === 'array') return `(${type}) ${name.slice(0, 40)}`;
  return `(${type})`;
}

function edgeName(s: Snapshot, edge: number): string {
  const type = s.edgeTypes[s.edges[edge + E_TYPE]!]!;
  const nameOrIndex = s.edges[edge + E_NAME]!;
  if (type === 'element' || type === 'hidden') return `[${nameOrIndex}]`;
  return s.strings[nameOrIndex] ?? String(nameOrIndex);
}

const isStrong = (s: Snapshot, edge: number) => s.edgeTypes[s.edges[edge + E_TYPE]!] !== 'weak' && s.edgeTypes[s.edges[edge + E_TYPE]!] !== 'shortcut';

/** Breadth first from the root over strong edges: each node's parent edge, for paths from a GC root. */
function parentsFromRoot(s: Snapshot): Int32Array {
  const parentEdge = new Int32Array(nodeCount(s)).fill(-1);
  const parentNode = new Int32Array(nodeCount(s)).fill(-1);
  const queue = new Uint32Array(nodeCount(s));
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  parentNode[0] = 0;
  while (head < tail) {
    const from = queue[head++]!;
    for (let e = s.firstEdge[from]!; e < s.firstEdge[from + 1]!; e += s.edgeFieldCount) {
      if (!isStrong(s, e)) continue;
      const to = s.edges[e + E_TO]! / s.nodeFieldCount;
      if (parentNode[to] !== -1) continue;
      parentNode[to] = from;
      parentEdge[to] = e;
      queue[tail++] = to;
    }
  }
  // Packed: parent node in the low array, edge looked up again when printing.
  const packed = new Int32Array(nodeCount(s) * 2);
  for (let i = 0; i < nodeCount(s); i++) {
    packed[i * 2] = parentNode[i]!;
    packed[i * 2 + 1] = parentEdge[i]!;
  }
  return packed;
}

function pathFromRoot(s: Snapshot, parents: Int32Array, ordinal: number, depth = 12): string {
  const steps: string[] = [];
  for (let at = ordinal, i = 0; at > 0 && i < depth; i++) {
    const edge = parents[at * 2 + 1]!;
    if (edge < 0) {
      steps.push('(unreachable)');
      break;
    }
    steps.push(`${label(s, parents[at * 2]!)}.${edgeName(s, edge)}`);
    at = parents[at * 2]!;
  }
  return steps.reverse().join(' → ');
}

function main(): void {
  const [beforeFile, afterFile, topArg] = process.argv.slice(2);
  if (!beforeFile || !afterFile) throw new Error('usage: heap-diff.js before.heapsnapshot after.heapsnapshot [top]');
  const top = Number(topArg ?? 25);
  const oldIds = new Set<number>();
  {
    const before = load(beforeFile);
    for (let i = 0; i < nodeCount(before); i++) oldIds.add(field(before, i, N_ID));
  }
  const s = load(afterFile);
  const count = nodeCount(s);
  const isNew = new Uint8Array(count);
  let newCount = 0;
  let newBytes = 0;
  const byLabel = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < count; i++) {
    if (oldIds.has(field(s, i, N_ID))) continue;
    isNew[i] = 1;
    newCount++;
    const size = field(s, i, N_SIZE);
    newBytes += size;
    const entry = byLabel.get(label(s, i)) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += size;
    byLabel.set(label(s, i), entry);
  }
  const kib = (bytes: number) => (bytes / 1024).toFixed(1);
  console.log(`${count} objects, ${newCount} new (${kib(newBytes)} KiB self size)\n`);
  console.log('New objects by constructor or kind (top by self size):');
  console.log('| Constructor / kind | New objects | Self KiB |');
  console.log('|---|---|---|');
  for (const [name, entry] of [...byLabel].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) {
    console.log(`| ${name.replace(/\|/g, '\\|')} | ${entry.count} | ${kib(entry.bytes)} |`);
  }

  // Charge each new object to the first old object whose strong edges reach it (breadth first from all old objects).
  const anchorOf = new Int32Array(count).fill(-1);
  const anchorEdge = new Int32Array(count).fill(-1);
  const queue = new Uint32Array(count);
  let head = 0;
  let tail = 0;
  for (let from = 0; from < count; from++) {
    if (isNew[from]) continue;
    for (let e = s.firstEdge[from]!; e < s.firstEdge[from + 1]!; e += s.edgeFieldCount) {
      if (!isStrong(s, e)) continue;
      const to = s.edges[e + E_TO]! / s.nodeFieldCount;
      if (!isNew[to] || anchorOf[to] !== -1) continue;
      anchorOf[to] = from;
      anchorEdge[to] = e;
      queue[tail++] = to;
    }
  }
  while (head < tail) {
    const from = queue[head++]!;
    for (let e = s.firstEdge[from]!; e < s.firstEdge[from + 1]!; e += s.edgeFieldCount) {
      if (!isStrong(s, e)) continue;
      const to = s.edges[e + E_TO]! / s.nodeFieldCount;
      if (!isNew[to] || anchorOf[to] !== -1) continue;
      anchorOf[to] = anchorOf[from]!;
      anchorEdge[to] = anchorEdge[from]!;
      queue[tail++] = to;
    }
  }
  const byAnchor = new Map<string, { anchor: number; count: number; bytes: number; kinds: Map<string, number> }>();
  for (let i = 0; i < count; i++) {
    if (!isNew[i]) continue;
    const anchor = anchorOf[i]!;
    const key = anchor < 0 ? 'unreached' : `${anchor}:${edgeName(s, anchorEdge[i]!)}`;
    const entry = byAnchor.get(key) ?? { anchor, count: 0, bytes: 0, kinds: new Map<string, number>() };
    entry.count++;
    entry.bytes += field(s, i, N_SIZE);
    entry.kinds.set(label(s, i), (entry.kinds.get(label(s, i)) ?? 0) + field(s, i, N_SIZE));
    byAnchor.set(key, entry);
  }
  const parents = parentsFromRoot(s);
  console.log('\nHolders of the new objects (the old object and the edge through which they are reached), top by self size:');
  for (const [key, entry] of [...byAnchor].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) {
    const kinds = [...entry.kinds].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, b]) => `${k} ${kib(b)}`).join(', ');
    const where = entry.anchor < 0 ? 'not reached from an old object' : `${label(s, entry.anchor)} .${key.slice(key.indexOf(':') + 1)}  (id ${field(s, entry.anchor, N_ID)})`;
    console.log(`\n${kib(entry.bytes)} KiB, ${entry.count} objects: ${where}`);
    console.log(`  kinds: ${kinds}`);
    if (entry.anchor >= 0) console.log(`  path: ${pathFromRoot(s, parents, entry.anchor)}`);
  }
}

main();
