// Guarantees: the bench reaches the engine through one module, bench/lib/engine.ts — no other
// file under bench/ imports from src/ — and its modules import each other without a circle.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BENCH = join(ROOT, 'bench');
const SEAM = 'bench/lib/engine.ts';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (name === 'results' || name === 'node_modules') return [];
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Relative specifiers of every `import … from`, `export … from` and bare `import '…'`, resolved from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
  ].map((m) => m[1] as string);
  return specs
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(ROOT, resolve(dirname(file), s)).replace(/\.js$/, '.ts'));
}

const graph = new Map(files(BENCH).map((f) => [relative(ROOT, f), importsOf(f)]));

test('only bench/lib/engine.ts imports from src/', () => {
  const reaching = [...graph].filter(([, targets]) => targets.some((t) => t.startsWith('src/'))).map(([f]) => f);
  assert.deepEqual(reaching, [SEAM]);
});

test('bench modules import each other without a circle', () => {
  const circles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    if (path.includes(file)) {
      circles.push([...path.slice(path.indexOf(file)), file].join(' → '));
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const target of graph.get(file) ?? []) if (graph.has(target)) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  assert.deepEqual(circles, []);
});

test('the checks see imports (they cannot pass vacuously)', () => {
  assert.ok(graph.get(SEAM)?.includes('src/store/types.ts'));
  assert.ok(graph.get('bench/growth.ts')?.includes('bench/lib/engine.ts'));
  assert.ok(graph.get('bench/lib/report.ts')?.includes('bench/lib/scenarios.ts'));
});
