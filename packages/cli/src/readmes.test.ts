import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commands } from './commands/index.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every README.md of the repository, outside node_modules and build output, and the pages of docs/. */
function readmes(dir = repoRoot): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.git', '.turbo'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...readmes(path));
    else if (entry.name === 'README.md' || (dir === join(repoRoot, 'docs') && entry.name.endsWith('.md'))) out.push(path);
  }
  return out;
}

describe('the READMEs and docs/ stand alone', () => {
  it('point at no file outside the repository: no specification seeds or design notes, every relative link exists', () => {
    const problems: string[] = [];
    for (const file of readmes()) {
      const text = readFileSync(file, 'utf8');
      const name = relative(repoRoot, file);
      for (const m of text.matchAll(/\bseeds? \d{3}\b|\bin the seed\b|DESIGN\.md|STYLE\.md|shared specification/g))
        problems.push(`${name}: "${m[0]}"`);
      for (const m of text.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        if (!existsSync(resolve(dirname(file), target))) problems.push(`${name}: link to ${target}, which is not in the repository`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("the CLI package's command table lists every command", () => {
    const readme = readFileSync(join(repoRoot, 'packages', 'cli', 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `kdelta ([a-z0-9 -]+?)(?: [<[-][^`]*)?`/gm)].map((m) => m[1]);
    expect(rows).toEqual(commands.map((c) => c.path.join(' ')));
  });
});
