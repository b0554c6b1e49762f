import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, packageVariant, repository, tempDir } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { run } from '../run.js';
import { declineNote } from './decline-note.js';
import { renderMetadataBlock } from './proposal-metadata.js';

const body = `## kdelta: add web\n\n---\n${renderMetadataBlock({
  version: '1.0.0',
  variant: 'web',
  fingerprint: 'f'.repeat(32),
  headCommit: 'a'.repeat(40),
  baseCommit: 'b'.repeat(40),
  conflicts: 0,
  kind: 'variant',
  upstream: { repo: 'https://github.com/org/catalog', ref: 'base-ns/v1', commit: 'c'.repeat(40) },
})}\n`;

describe('a new proposal names the declined one it follows, with where to find it', () => {
  it.each([
    {
      name: 'on GitHub: a link to the pull request',
      url: 'https://github.com/org/cluster-01/pull/7',
      title: 'kdelta: add web (web) from base-ns/v1',
      says: 'A previous proposal, "kdelta: add web (web) from base-ns/v1" (upstream `base-ns/v1`, commit `cccccccccccc`), was declined (see [its page](https://github.com/org/cluster-01/pull/7)):',
    },
    {
      name: "on the local forge: the record's path",
      url: '.kdelta/proposals/cluster-01/web.md',
      title: 'kdelta: add web (web) from base-ns/v1',
      says: 'was declined (its record, `.kdelta/proposals/cluster-01/web.md`, now holds this proposal):',
    },
    {
      name: 'an address that would end the link early is no link',
      url: 'https://github.com/org/x)](https://evil.example',
      title: 'kdelta: add web',
      says: 'its record, `https://github.com/org/x)](https://evil.example`, now holds this proposal',
    },
    {
      name: 'a title a person edited is text, not markup',
      url: 'https://github.com/org/cluster-01/pull/7',
      title: 'ok [click](https://evil.example) @admin <!-- x -->',
      says: 'A previous proposal, "ok \\[click\\](https\\://evil.example) @\u200badmin \\<\\!\\-\\- x \\-\\-\\>"',
    },
  ])('$name', ({ url, title, says }) => {
    const note = declineNote({ title, url, body });
    expect(note).toContain(says);
    // no link but kdelta's own, and no comment opens
    expect(note).not.toContain('[click](');
    expect(note).not.toContain('<!--');
  });
});

describe('a proposal after a declined one (local forge, a real run)', () => {
  it("names the declined proposal's record", async () => {
    const f = createFleet(['cluster-01']);
    onTestFinished(() => f.cleanup());
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01'),
    });
    const cacheDir = tempDir();
    const env = { ...process.env, KDELTA_CACHE_DIR: cacheDir };
    const options = { cwd: f.control, mode: 'variants' as const, cacheDir, env };
    expect((await run(options)).results[0]?.action).toBe('proposed');
    // a reviewer says no on the local forge: the branch is deleted unmerged
    execFileSync('git', ['update-ref', '-d', 'refs/heads/kdelta/web'], { cwd: f.downstream('cluster-01') });
    expect((await run(options)).results[0]?.action).toBe('declined');
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example2\n' }, 'base-ns/v2');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    expect((await run(options)).results[0]?.action).toBe('proposed');
    const record = readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8');
    expect(record).toMatch(
      /A previous proposal, "kdelta: add web \(web\) from base-ns\/v1" \(upstream `base-ns\/v1`, commit `[0-9a-f]{12}`\), was declined \(its record, `\.kdelta\/proposals\/cluster-01\/web\.md`, now holds this proposal\)/,
    );
  });
});
