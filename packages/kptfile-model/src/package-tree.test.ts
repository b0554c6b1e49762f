import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KptfileError } from './errors.js';
import { PackageTree } from './package-tree.js';
import { writeTreeChanges } from './package-write.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function pkgDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdelta-tree-'));
  dirs.push(dir);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}

const kptfile = (upstream = false) =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\n${upstream ? 'upstream:\n  type: git\n  git:\n    repo: r\n    directory: /\n    ref: main\n' : ''}`;
const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;

describe('PackageTree', () => {
  it('reads files, empty directories and symlinks once, never .git', () => {
    const dir = pkgDir({ Kptfile: kptfile(), 'a.yaml': cm('a'), '.git/HEAD': 'ref', 'docs/README.md': 'hi' });
    mkdirSync(join(dir, 'empty'));
    symlinkSync('a.yaml', join(dir, 'link.yaml'));
    const tree = PackageTree.read(dir)!;
    expect(tree.exists('.git')).toBe(false);
    expect(tree.isDir('empty')).toBe(true);
    expect(tree.typeOf('link.yaml')).toBe('symlink');
    expect(tree.text('docs/README.md')).toBe('hi');
    expect(tree.package().ownFiles()).toEqual({
      files: [
        { path: 'Kptfile', text: kptfile() },
        { path: 'a.yaml', text: cm('a') },
        { path: 'docs/README.md', text: 'hi' },
      ],
      dirs: ['docs', 'empty'],
    });
  });

  it('gives each package its own files and lists nested packages, local and remote', () => {
    const dir = pkgDir({
      Kptfile: kptfile(),
      'a.yaml': cm('a'),
      'local/Kptfile': kptfile(),
      'local/b.yaml': cm('b'),
      'remote/Kptfile': kptfile(true),
      'remote/inner/Kptfile': kptfile(),
    });
    const root = PackageTree.read(dir)!.package();
    expect(root.ownFiles().files.map((f) => f.path)).toEqual(['Kptfile', 'a.yaml']);
    expect(root.nestedPackages()).toEqual(['local']);
    expect(root.nestedPackages({ includeRemote: true })).toEqual(['local', 'remote']);
    expect(root.nestedPackages({ includeRemote: true, recurseIntoRemote: true })).toEqual(['local', 'remote', 'remote/inner']);
    expect(root.at('remote').isRemote()).toBe(true);
    expect(
      root
        .at('local')
        .resources()
        .map((r) => r.object['metadata']),
    ).toEqual([{ name: 'b' }]);
  });

  it('parses resources only when asked, honouring .krmignore, and names a broken file', () => {
    const dir = pkgDir({ Kptfile: kptfile(), '.krmignore': 'ignored.yaml\n', 'ignored.yaml': ': broken: [', 'bad.yaml': 'a: [' });
    const pkg = PackageTree.read(dir)!.package();
    expect(pkg.ownFiles().files).toHaveLength(4);
    expect(() => pkg.resources()).toThrow(KptfileError);
    expect(() => pkg.resources()).toThrow(/bad\.yaml/);
    pkg.delete('bad.yaml');
    expect(pkg.resources()).toEqual([]);
  });

  it('computes what to write and delete to go from one tree to another', () => {
    const before = PackageTree.fromFiles([
      ['Kptfile', kptfile()],
      ['a.yaml', cm('a')],
      ['gone/x.txt', 'x'],
      ['same.txt', 's'],
    ]);
    const after = before.clone();
    after.write('a.yaml', cm('A'));
    after.write('new/b.yaml', cm('b'));
    after.delete('gone');
    after.mkdir('keep-me');
    const changes = after.changesFrom(before);
    expect(changes.written.map((w) => [w.path, w.bytes.toString()])).toEqual([
      ['a.yaml', cm('A')],
      ['new/b.yaml', cm('b')],
    ]);
    expect(changes.deleted).toEqual(['gone']);
    expect(changes.created).toEqual(['keep-me', 'new']);
    expect(before.text('a.yaml')).toBe(cm('a'));
  });

  it('copies a subtree from another tree, filtered', () => {
    const from = PackageTree.fromFiles([
      ['p/Kptfile', kptfile()],
      ['p/a.yaml', cm('a')],
      ['p/skip/x', 'x'],
    ]);
    const to = PackageTree.empty();
    to.package().copyFrom(from.package('p'), '', (rel) => rel !== 'skip');
    expect([...to.allFiles().keys()]).toEqual(['Kptfile', 'a.yaml']);
  });
});

describe('file modes', () => {
  it('keeps the executable bit through read, edits, copies and a write back to disk', () => {
    const dir = pkgDir({ Kptfile: kptfile(), 'fn/set.sh': '#!/bin/sh\ncat\n', 'a.yaml': cm('a') });
    chmodSync(join(dir, 'fn/set.sh'), 0o755);
    const before = PackageTree.read(dir)!;
    expect(before.isExecutable('fn/set.sh')).toBe(true);
    expect(before.isExecutable('a.yaml')).toBe(false);
    const after = before.clone();
    // new content, same mode; a copy carries the mode; a new file is not executable unless asked
    after.write('fn/set.sh', '#!/bin/sh\ncat -\n');
    after.copyFrom(before, 'fn/set.sh', 'fn/copy.sh');
    after.write('fn/new.sh', '#!/bin/sh\n');
    after.write('fn/run.sh', '#!/bin/sh\n', { executable: true });
    after.setExecutable('a.yaml', true);
    expect(['fn/set.sh', 'fn/copy.sh', 'fn/new.sh', 'fn/run.sh', 'a.yaml'].map((p) => after.isExecutable(p))).toEqual([
      true,
      true,
      false,
      true,
      true,
    ]);
    const changes = after.changesFrom(before);
    expect(changes.written.map((w) => [w.path, w.executable === true])).toEqual([
      ['a.yaml', true],
      ['fn/copy.sh', true],
      ['fn/new.sh', false],
      ['fn/run.sh', true],
      ['fn/set.sh', true],
    ]);
    writeTreeChanges(dir, before, after);
    const mode = (p: string) => statSync(join(dir, p)).mode & 0o777;
    expect([mode('fn/set.sh'), mode('fn/copy.sh'), mode('fn/run.sh'), mode('a.yaml')]).toEqual([0o755, 0o755, 0o755, 0o755]);
    expect(mode('fn/new.sh') & 0o111).toBe(0);
    expect(PackageTree.read(dir)!.isExecutable('fn/set.sh')).toBe(true);
  });

  it('lists symlinks with their targets, never following them', () => {
    const dir = pkgDir({ Kptfile: kptfile(), 'sub/a.yaml': cm('a') });
    symlinkSync('/etc', join(dir, 'sub/outside'));
    symlinkSync('a.yaml', join(dir, 'sub/b.yaml'));
    const tree = PackageTree.read(dir)!;
    expect(tree.allLinks()).toEqual(
      new Map([
        ['sub/b.yaml', 'a.yaml'],
        ['sub/outside', '/etc'],
      ]),
    );
    expect(tree.allLinks('sub')).toEqual(
      new Map([
        ['b.yaml', 'a.yaml'],
        ['outside', '/etc'],
      ]),
    );
    expect([...tree.allFiles().keys()]).toEqual(['Kptfile', 'sub/a.yaml']);
  });
});

describe('PackageTree bytes', () => {
  it('keeps a CRLF file CRLF when text is written over it; LF files and new files as written', () => {
    const tree = PackageTree.fromFiles([
      ['crlf.yaml', 'a: 1\r\nb: 2\r\n'],
      ['lf.yaml', 'a: 1\n'],
    ]);
    tree.write('crlf.yaml', 'a: 1\nb: 3\nc: 4\n');
    tree.write('lf.yaml', 'a: 2\n');
    tree.write('new.yaml', 'a: 1\n');
    expect(tree.text('crlf.yaml')).toBe('a: 1\r\nb: 3\r\nc: 4\r\n');
    expect(tree.text('lf.yaml')).toBe('a: 2\n');
    expect(tree.text('new.yaml')).toBe('a: 1\n');
  });

  it('refuses to read a YAML file that is not UTF-8, naming it; other files are bytes, unread', () => {
    const latin1 = Buffer.from([0x61, 0x3a, 0x20, 0xfc, 0x0a]); // "a: ü" in Latin-1
    const tree = PackageTree.fromFiles([
      ['Kptfile', 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n'],
      ['cm.yaml', latin1],
      ['logo.bin', latin1],
      ['bom.yaml', '\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n'],
    ]);
    expect(tree.isUtf8('cm.yaml')).toBe(false);
    expect(tree.isUtf8('bom.yaml')).toBe(true);
    expect(tree.text('bom.yaml')?.startsWith('\ufeff')).toBe(true);
    expect(() => tree.package().yamlText('cm.yaml')).toThrow(/^cm\.yaml: not UTF-8 text/);
    expect(() => tree.package().resources()).toThrow(/^cm\.yaml: not UTF-8 text/);
    const copy = PackageTree.empty();
    copy.copyFrom(tree, '', '');
    expect(copy.bytes('logo.bin')?.equals(latin1)).toBe(true);
    expect(copy.isUtf8('cm.yaml')).toBe(false);
  });

  it('parses a file once for every edit elsewhere, and again once it is written', () => {
    const tree = PackageTree.fromFiles([['cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n']]);
    const first = tree.package().resources()[0];
    tree.write('other.txt', 'x');
    expect(tree.package().resources()[0]).toBe(first);
    expect(tree.clone().package().resources()[0]).toBe(first);
    tree.write('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n');
    expect(tree.package().resources()[0]?.object).toMatchObject({ metadata: { name: 'b' } });
  });
});
