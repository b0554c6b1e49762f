// The `kdelta` command starts from one bundled file (scripts/bundle.mjs), built by `pnpm build`:
// node reads and compiles it at once instead of resolving some two hundred modules, which was a
// third of a run with nothing new. Needs the packages built (`pnpm build`).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const bundle = cli('dist/kdelta.js');

function built(): string {
  if (!existsSync(bundle)) throw new Error('build the CLI first (pnpm build): dist/kdelta.js is what bin/kdelta.js runs');
  return readFileSync(bundle, 'utf8');
}

/** Every module a file imports statically or dynamically, as written. */
function importsOf(source: string): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(
    /(?:^|[;\s])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[;\s])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm,
  )) {
    found.add((m[1] ?? m[2] ?? m[3])!);
  }
  return [...found].sort();
}

describe('the kdelta command, bundled', () => {
  it('bin/kdelta.js runs dist/kdelta.js, which loads nothing but Node built-ins', () => {
    expect(importsOf(readFileSync(cli('bin/kdelta.js'), 'utf8'))).toEqual(['../dist/kdelta.js']);
    const imports = importsOf(built());
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((i) => !i.startsWith('node:'))).toEqual([]);
  });

  it.each([
    { args: ['--version'], says: `kdelta ${(JSON.parse(readFileSync(cli('package.json'), 'utf8')) as { version: string }).version}\n` },
    { args: ['--help'], says: expect.stringMatching(/^kdelta keeps every copy of a kpt package current/) },
  ])('kdelta $args answers from the bundle', ({ args, says }) => {
    built();
    expect(execFileSync(process.execPath, [cli('bin/kdelta.js'), ...args], { encoding: 'utf8' })).toEqual(says);
  });
});
