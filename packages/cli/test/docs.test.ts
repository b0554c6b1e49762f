// The documentation cannot drift from the product: every ```console block of README.md and docs/
// (a command and its output) is run and compared with what it shows, and every relative link of
// README.md, docs/ and the packages' READMEs leads to a file, and to a heading of it when it names
// one. The convention is written in docs/development.md ("Checked documentation"). The console
// blocks run the example scripts, which drive the built CLI (`pnpm build` first).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/** README.md, every file of docs/ and every package's README.md: the Markdown a reader follows. */
function documents(): string[] {
  const docs = existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(root, 'docs', f))
    : [];
  const packageReadmes = readdirSync(join(root, 'packages'))
    .map((p) => join(root, 'packages', p, 'README.md'))
    .filter((f) => existsSync(f));
  return [join(root, 'README.md'), ...docs, ...packageReadmes];
}

interface Block {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly info: string;
  readonly lines: readonly string[];
}

interface Parsed {
  readonly blocks: readonly Block[];
  /** Lines outside fenced blocks, with their 1-based numbers. */
  readonly prose: readonly { readonly line: number; readonly text: string }[];
}

/** Splits a Markdown file into fenced blocks and the prose around them. */
function parseMarkdown(file: string, text: string): Parsed {
  const blocks: Block[] = [];
  const prose: { line: number; text: string }[] = [];
  let open: { fence: string; line: number; info: string; lines: string[] } | undefined;
  text.split('\n').forEach((raw, i) => {
    if (open) {
      if (raw.trimEnd() === open.fence || (raw.startsWith(open.fence) && /^[`~]*$/.test(raw.trim()))) {
        blocks.push({ file, line: open.line, info: open.info, lines: open.lines });
        open = undefined;
      } else open.lines.push(raw);
      return;
    }
    const fence = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/.exec(raw);
    if (fence) open = { fence: fence[1]!, line: i + 1, info: fence[2]!, lines: [] };
    else prose.push({ line: i + 1, text: raw });
  });
  return { blocks, prose };
}

/** GitHub's anchor for a heading's text (github-slugger), before duplicates are numbered. */
function slug(heading: string): string {
  const rendered = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/[`*]/g, '');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file's headings make, duplicates numbered as GitHub numbers them. */
function anchorsOf(parsed: Parsed): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of parsed.prose) {
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative links of a file's prose (inline code left out), with their lines. */
function linksOf(parsed: Parsed): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text } of parsed.prose)
    for (const m of text.replace(/`[^`]*`/g, '').matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) out.push({ line, target });
    }
  return out;
}

/** Broken relative links of `files`: a missing file, or a heading the target file does not have. */
function brokenLinks(files: readonly string[]): string[] {
  const cache = new Map<string, Parsed>();
  const parsed = (file: string) => {
    let p = cache.get(file);
    if (!p) cache.set(file, (p = parseMarkdown(file, readFileSync(file, 'utf8'))));
    return p;
  };
  const problems: string[] = [];
  for (const file of files)
    for (const { line, target } of linksOf(parsed(file))) {
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const to = path === '' ? file : resolve(dirname(file), decodeURI(path));
      const where = `${relative(root, file)}:${line}: link to ${target}`;
      if (!existsSync(to)) problems.push(`${where}: no file ${relative(root, to)}`);
      else if (anchor !== undefined && anchor !== '') {
        if (!to.endsWith('.md') || statSync(to).isDirectory()) problems.push(`${where}: an anchor into a file that is not Markdown`);
        else if (!anchorsOf(parsed(to)).has(decodeURIComponent(anchor)))
          problems.push(`${where}: ${relative(root, to)} has no heading with the anchor #${anchor}`);
      }
    }
  return problems;
}

const WILD = '…';
const PROGRESS = /^ {2}\[(\d+)\/(\d+)\] (.*)$/;

/**
 * The comparison's normal form, the same for the block and the output: trailing blanks and the
 * blank lines around the text dropped, commit hashes (12 or 40 hex digits) made one word, and each
 * run of progress lines (`  [k/n] …`, printed in the order the variants finish) sorted and
 * numbered again; a block that shows no progress line at all leaves them out.
 */
function normalise(text: string, keepProgress: boolean): string[] {
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd().replace(/\b(?:[0-9a-f]{40}|[0-9a-f]{12})\b/g, '<commit>'))
    .filter((l) => keepProgress || !PROGRESS.test(l));
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    if (!PROGRESS.test(lines[i]!)) {
      out.push(lines[i++]!);
      continue;
    }
    const run: string[] = [];
    while (i < lines.length && PROGRESS.test(lines[i]!)) run.push(lines[i++]!);
    const rest = run.map((l) => PROGRESS.exec(l)!).sort((a, b) => (a[3]! < b[3]! ? -1 : a[3]! > b[3]! ? 1 : 0));
    rest.forEach((m, k) => out.push(`  [${k + 1}/${m[2]}] ${m[3]}`));
  }
  while (out[0] === '') out.shift();
  while (out.at(-1) === '') out.pop();
  return out;
}

/**
 * Whether the shown lines are the output, `…` standing for what the block leaves out: on a line
 * of its own any number of lines (none included), within a line any text. Returns undefined on a
 * match, else the index of the first shown line that could not be matched.
 */
function mismatch(shown: readonly string[], output: readonly string[]): number | undefined {
  const pattern = shown.map((l) => (l.includes(WILD) ? new RegExp(`^${l.split(WILD).map(escapeRegExp).join('.*?')}$`, 'u') : undefined));
  const lineMatches = (i: number, j: number) => {
    const p = pattern[i];
    return p ? p.test(output[j]!) : shown[i] === output[j];
  };
  const memo = new Map<number, boolean>();
  let furthest = 0;
  const go = (i: number, j: number): boolean => {
    const key = i * (output.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    furthest = Math.max(furthest, i);
    let ok: boolean;
    if (i === shown.length) ok = j === output.length;
    else if (shown[i]!.trim() === WILD) ok = go(i + 1, j) || (j < output.length && go(i, j + 1));
    else ok = j < output.length && lineMatches(i, j) && go(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0) ? undefined : Math.min(furthest, shown.length - 1);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The temporary directory as the docs show it. */
function shortenTemp(text: string): string {
  let out = text;
  for (const dir of new Set([realpathSync(tmpdir()), tmpdir()])) if (dir !== '/tmp') out = out.split(dir).join('/tmp');
  return out;
}

const outputs = new Map<string, string>();
/** Runs a console block's command from the repository root (once per command) and returns its output. */
function outputOf(command: string): string {
  const known = outputs.get(command);
  if (known !== undefined) return known;
  const [node, script, ...args] = command.split(/\s+/);
  if (node !== 'node' || !script?.startsWith('examples/'))
    throw new Error(`"$ ${command}": a console block runs a script of examples/ (\`$ node examples/…\`), which makes its own repositories`);
  const r = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (r.status !== 0)
    throw new Error(`$ ${command} exited ${r.status} (the examples run the built CLI: pnpm build first):\n${r.stdout}${r.stderr}`);
  // stdout only: what the docs show (the examples print each kdelta command's stderr there too)
  const out = shortenTemp(r.stdout);
  outputs.set(command, out);
  return out;
}

describe('the checked-documentation convention', () => {
  it.each([
    ['the same lines', ['a', 'b'], ['a', 'b'], undefined],
    ['a line that differs', ['a', 'c'], ['a', 'b'], 1],
    ['a line missing from the output', ['a', 'b', 'c'], ['a', 'b'], 2],
    ['a line of output the block does not show', ['a'], ['a', 'b'], 0],
    ['… on its own line stands for lines left out', ['a', '…', 'd'], ['a', 'b', 'c', 'd'], undefined],
    ['… on its own line stands for no line too', ['a', '…', 'b'], ['a', 'b'], undefined],
    ['… within a line stands for any text', ['in /tmp/demo-…: ok'], ['in /tmp/demo-x1Y2: ok'], undefined],
    ['… within a line matches within that line only', ['a…c'], ['ab', 'c'], 0],
  ] as const)('%s', (_name, shown, output, expected) => {
    expect(mismatch(shown, output)).toBe(expected);
  });

  it('compares commit hashes as one word and progress lines in any order, or leaves them out', () => {
    const output = '\n$ kdelta run\n  [1/2] b: proposed\n  [2/2] a: proposed\nfrom `0123456789ab` to `v2`\n';
    expect(normalise(output, true)).toEqual(['$ kdelta run', '  [1/2] a: proposed', '  [2/2] b: proposed', 'from `<commit>` to `v2`']);
    expect(normalise(output, false)).toEqual(['$ kdelta run', 'from `<commit>` to `v2`']);
  });

  it('finds a heading anchor as GitHub makes it', () => {
    expect(slug('Control resources: RunSettings and editor support')).toBe('control-resources-runsettings-and-editor-support');
    expect(slug('The `kdelta` status')).toBe('the-kdelta-status');
    expect(slug("The local forge's records")).toBe('the-local-forges-records');
  });
});

describe('the documentation', () => {
  const files = documents();
  const blocks = files.flatMap((f) => parseMarkdown(f, readFileSync(f, 'utf8')).blocks);
  const consoleBlocks = blocks.filter((b) => b.info === 'console');
  const where = (b: Block) => `${relative(root, b.file)}:${b.line}`;

  it('shows a command with its output only in console blocks, each starting with the command it runs', () => {
    const problems = blocks.flatMap((b) =>
      b.info !== 'console' && b.lines.some((l) => l.startsWith('$ '))
        ? [`${where(b)}: a \`${b.info || 'plain'}\` block shows a command and its output; make it a console block the docs test runs`]
        : b.info === 'console' && !b.lines[0]?.startsWith('$ ')
          ? [`${where(b)}: a console block starts with the command (\`$ …\`) whose output it shows`]
          : [],
    );
    expect(problems).toEqual([]);
    expect(consoleBlocks.length).toBeGreaterThan(0);
  });

  it.each(consoleBlocks.map((b) => [where(b), b] as const))('%s shows what its command prints', (_where, block) => {
    const command = block.lines[0]!.slice(2).trim();
    const shown = block.lines.slice(1).join('\n');
    const keepProgress = block.lines.some((l) => PROGRESS.test(l));
    const expected = normalise(shown, keepProgress);
    const actual = normalise(outputOf(command), keepProgress);
    const at = mismatch(expected, actual);
    if (at !== undefined)
      expect.fail(
        `${where(block)}: the block's line "${expected[at]}" is not what \`${command}\` prints there (\`…\` stands for what a block leaves out). Its output, normalised:\n${actual.join('\n')}`,
      );
  });

  it('links only to files that exist, and to headings they have', () => {
    expect(brokenLinks(files)).toEqual([]);
  });
});
