import type { PkgChange } from '@kdelta/package-update';
import { describe, expect, it } from 'vitest';
import type { UpstreamChanges } from '../jobs/upstream-changes.js';
import { renderProposalBodies, type ProposalBodyInput } from './proposal-body.js';
import { MAX_CHANGE_LINES, upstreamSection } from './upstream-section.js';

const sha = (c: string) => c.repeat(40);
const changed = (subject: string, fields: number): PkgChange => ({
  kind: 'changed',
  subject,
  file: 'deploy.yaml',
  fields: [],
  values: Array.from({ length: fields }, (_, i) => ({ path: `.spec.f${i}`, before: i, after: i + 1 })),
});
const changes = (over: Partial<UpstreamChanges> = {}): UpstreamChanges => ({
  from: sha('a'),
  to: sha('b'),
  resources: [changed('apps/Deployment web', 1)],
  commits: [{ sha: sha('c'), name: 'Ann', subject: 'Scale web', url: `https://github.com/org/catalog/commit/${sha('c')}` }],
  totalCommits: 1,
  ...over,
});

describe('what upstream changed, in a proposal', () => {
  it.each([
    {
      name: 'a commit on the forge: linked to its page',
      c: changes(),
      says: `- [\`cccccccccccc\`](https://github.com/org/catalog/commit/${sha('c')}) by Ann: \`Scale web\``,
    },
    {
      name: 'a commit elsewhere: its id',
      c: changes({ commits: [{ sha: sha('d'), name: 'Bob', subject: 'Fix' }] }),
      says: '- `dddddddddddd` by Bob: `Fix`',
    },
    {
      name: 'more commits than listed: counted',
      c: changes({ totalCommits: 25 }),
      says: 'Commits that touch the package (25):',
    },
    { name: 'more commits than listed: the rest counted', c: changes({ totalCommits: 25 }), says: '- …and 24 more' },
    {
      name: 'a history longer than is read: said',
      c: changes({ totalCommits: undefined }),
      says: '- …the newest ones only: the history between the two commits is longer than kdelta reads',
    },
    {
      name: 'a history that could not be read: said',
      c: changes({ historyError: 'git fetch failed' }),
      says: 'Its commits could not be listed: git fetch failed',
    },
    {
      name: 'fields past the limit: counted',
      c: changes({ resources: [changed('apps/Deployment web', MAX_CHANGE_LINES + 10)] }),
      says: '- …and 11 more line(s) of changes',
    },
    {
      name: "a stranger's commit and resource: text",
      c: changes({
        resources: [changed('ConfigMap <!-- x -->', 1)],
        commits: [{ sha: sha('e'), name: '@admin [me](https://evil.example)', subject: '`x` <b>' }],
      }),
      says: '- `eeeeeeeeeeee` by @\u200badmin \\[me\\](https\\://evil.example): `` `x` <b> ``',
    },
  ])('$name', ({ c, says }) => {
    const text = upstreamSection(c, true).join('\n');
    expect(text).toContain(says);
    expect(text).not.toContain('<!--');
  });
});

describe('what upstream changed, inside the body size budget', () => {
  const input = (c: UpstreamChanges): ProposalBodyInput => ({
    title: 'kdelta: update web (web) to v2',
    summary: 'Updates package `web`.',
    downstream: { repo: 'https://github.com/org/cluster-01', branch: 'main', directory: 'web' },
    changes: [{ status: 'modified', path: 'web/deploy.yaml' }],
    // a long resource table: dropping it is the first step
    resources: Array.from(
      { length: 20 },
      (_, i) =>
        ({
          resource: `apps/Deployment web-${i}`,
          file: 'deploy.yaml',
          action: 'merged',
          changed: true,
        }) as ProposalBodyInput['resources'][number],
    ),
    conflicts: [],
    upstreamChanges: c,
    metadata: { version: '1', variant: 'web', fingerprint: 'f', headCommit: sha('a'), baseCommit: sha('b'), conflicts: 0, kind: 'variant' },
  });

  it('whole when it fits; the resource table goes first, then the list becomes one line', () => {
    const c = changes({ resources: [changed('apps/Deployment web', MAX_CHANGE_LINES)] });
    const whole = renderProposalBodies(input(c));
    expect(whole.shortened).toBe(false);
    expect(whole.body).toContain('  - `.spec.f0`: `0` → `1`');
    const withoutTable = renderProposalBodies(input(c), whole.body.length - 10);
    expect(withoutTable.body).not.toContain('| resource | file | what happened |');
    expect(withoutTable.body).toContain('  - `.spec.f0`: `0` → `1`');
    const oneLine = renderProposalBodies(input(c), withoutTable.body.length - 10);
    expect(oneLine.body).toContain(
      "From `aaaaaaaaaaaa` to `bbbbbbbbbbbb`: 1 resource(s) or file(s) changed upstream; the list and the commits are in the run's report.",
    );
    expect(oneLine.body).not.toContain('.spec.f0');
    expect(oneLine.full).toContain('  - `.spec.f0`: `0` → `1`');
  });
});
