import type { Conflict } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import {
  conflictChoice,
  pendingTicks,
  renderProposalBody,
  tickedChoices,
  type Decisions,
  type ProposalBodyInput,
} from './proposal-body.js';
import { parseMetadataBlock, renderMetadataBlock, type ProposalMetadata } from './proposal-metadata.js';

const conflict = (over: Partial<Conflict> = {}): Conflict => ({
  resource: 'apps/Deployment web',
  file: 'deploy.yaml',
  path: '.spec.replicas',
  values: { origin: 3, upstream: 4, local: 6 },
  rule: 'both-changed-upstream-wins',
  winner: 'upstream',
  message: '',
  ...over,
});

const metadata: ProposalMetadata = {
  version: '1.0.0',
  variant: 'web',
  fingerprint: 'f'.repeat(32),
  headCommit: 'a'.repeat(40),
  baseCommit: 'b'.repeat(40),
  conflicts: 1,
  kind: 'variant',
};

function body(conflicts: Conflict[], decisions?: Decisions, meta: Partial<ProposalMetadata> = {}): string {
  const input: ProposalBodyInput = {
    title: 'kdelta: update web (web) to v2',
    summary: 'Updates package `web`.',
    downstream: { repo: 'https://github.com/org/cluster-01', branch: 'main', directory: 'web' },
    changes: [{ status: 'modified', path: 'web/deploy.yaml' }],
    resources: [],
    conflicts,
    decisions,
    metadata: { ...metadata, ...meta },
  };
  return renderProposalBody(input);
}

describe('a conflict offers the other value as a task item', () => {
  it.each([
    { name: 'upstream won: keep local', c: conflict(), label: 'keep local `6` for `.spec.replicas` (apps/Deployment web)' },
    {
      name: 'local won (local-wins): take upstream',
      c: conflict({ winner: 'local', rule: 'both-changed-local-wins' }),
      label: 'take upstream `4` for `.spec.replicas` (apps/Deployment web)',
    },
    {
      name: 'a string value, in a keyed list',
      c: conflict({ path: '.spec.template.spec.containers[name="web"].image', values: { origin: 'a:1', upstream: 'a:2', local: 'a:3' } }),
      label: 'keep local `a:3` for `.spec.template.spec.containers[name="web"].image` (apps/Deployment web)',
    },
    {
      name: 'a map value',
      c: conflict({
        path: '.data',
        resource: 'ConfigMap settings',
        values: { origin: { a: '1' }, upstream: { a: '2' }, local: { b: '1' } },
      }),
      label: 'keep local `{"b":"1"}` for `.data` (ConfigMap settings)',
    },
    {
      name: 'local deleted the field: nothing to keep',
      c: conflict({ values: { origin: 3, upstream: 4, local: undefined } }),
      label: undefined,
    },
    { name: 'a whole list item: no field to pin', c: conflict({ path: '.spec.containers[name="web"]' }), label: undefined },
    { name: 'a whole resource', c: conflict({ path: '.' }), label: undefined },
  ])('$name', ({ c, label }) => {
    expect(conflictChoice(c)?.label).toBe(label);
    const text = body([c]);
    if (label) expect(text).toContain(`\n- [ ] <!-- kdelta-decide:${conflictChoice(c)!.id} --> ${label}\n`);
    else expect(text).not.toMatch(/^- \[ \]/m);
  });
});

describe('a conflict on a long list reads by the items that differ', () => {
  // kube-rbac-proxy's args: every value starts with the same 80 characters
  const args = ['--secure-listen-address=0.0.0.0:8443', '--upstream=http://127.0.0.1:8080/', '--logtostderr=true', '--v=0'];
  const c = conflict({
    resource: 'apps/Deployment proxy',
    path: '.spec.template.spec.containers[name="proxy"].args',
    values: { origin: args, upstream: [...args.slice(0, 3), '--v=10'], local: [...args, '--tls-min-version=VersionTLS12'] },
  });

  it('in the conflict table: origin, then what upstream and local each changed', () => {
    expect(body([c])).toContain(
      '| apps/Deployment proxy | `.spec.template.spec.containers[name="proxy"].args` | a list of 4 | [3] `"--v=0"` → `"--v=10"` | + `"--tls-min-version=VersionTLS12"` | both-changed-upstream-wins | upstream |',
    );
  });

  it('in the box: the side it takes and the side it replaces, by their edits; the id still covers the full values', () => {
    const choice = conflictChoice(c)!;
    expect(choice.label).toBe(
      'keep local\'s + `"--tls-min-version=VersionTLS12"` over upstream\'s [3] `"--v=0"` → `"--v=10"` for `.spec.template.spec.containers[name="proxy"].args` (apps/Deployment proxy)',
    );
    const longer = conflict({ ...c, values: { ...c.values, local: [...args, '--tls-min-version=VersionTLS13'] } });
    expect(conflictChoice(longer)!.id).not.toBe(choice.id);
    expect(conflictChoice(longer)!.label).not.toBe(choice.label);
  });
});

describe('the ticks read back from a body', () => {
  const label = 'keep local `6` for `.spec.replicas` (apps/Deployment web)';
  const id = conflictChoice(conflict())!.id;
  const tick = { id, text: label };
  const rendered = body([conflict()]);
  const box = `<!-- kdelta-decide:${id} -->`;
  const ticked = rendered.replace(`- [ ] ${box}`, `- [x] ${box}`);
  it.each([
    { name: 'as rendered: nothing ticked', text: rendered, ticks: [] },
    { name: 'ticked with x', text: ticked, ticks: [tick] },
    { name: 'ticked with X', text: rendered.replace(`- [ ] ${box}`, `- [X] ${box}`), ticks: [tick] },
    { name: "GitHub's web page: CRLF line ends", text: ticked.replace(/\n/g, '\r\n'), ticks: [tick] },
    { name: 'a * bullet, indented', text: ticked.replace(`- [x] ${box}`, `  * [x] ${box}`), ticks: [tick] },
    { name: 'trailing spaces', text: ticked.replace(`${label}\n`, `${label}   \n`), ticks: [tick] },
    { name: 'a checkbox of something else', text: rendered.replace('#### Decide\n', '#### Decide\n- [x] deploy on Friday\n'), ticks: [] },
    { name: 'a decided item (no box)', text: `#### Decide\n- ${label}: decided on this proposal\n`, ticks: [] },
    { name: 'a box of kdelta outside the Decide section', text: `### Conflicts\n- [x] ${box} ${label}\n\n#### Decide\n\n`, ticks: [] },
    { name: 'no Decide section', text: `- [x] ${box} ${label}\n`, ticks: [] },
  ])('$name', ({ text, ticks }) => {
    expect(tickedChoices(text)).toEqual(ticks);
  });

  it('a tick the metadata records as decided is not pending; another one is', () => {
    const other = { id: 'fedcba9876543210', text: 'take upstream `4` for `.spec.paused` (apps/Deployment web)' };
    const text = `#### Decide\n\n- [x] ${box} ${label}\n- [x] <!-- kdelta-decide:${other.id} --> ${other.text}\n\n---\n${renderMetadataBlock({ ...metadata, decided: [id] })}\n`;
    expect(pendingTicks(text)).toEqual([other]);
    expect(parseMetadataBlock(text)?.decided).toEqual([id]);
  });
});

describe('decisions in the body', () => {
  const c = conflict();
  const choice = conflictChoice(c)!;
  it('a decided conflict: its row says so, its item has no box, the metadata records it', () => {
    const text = body([], { decided: [{ conflict: c, choice }], ignored: [] }, { decided: [choice.id], conflicts: 0 });
    expect(text).toContain('### Conflicts (0 open, 1 decided)');
    expect(text).toContain(
      '| apps/Deployment web | `.spec.replicas` | `3` | `4` | `6` | both-changed-upstream-wins | kept local (decided on this proposal) |',
    );
    expect(text).toContain(`\n- ${choice.label}: decided on this proposal (pinned with \`# kdelta:local\`)\n`);
    expect(text).not.toMatch(/^- \[/m);
    expect(pendingTicks(text)).toEqual([]);
  });

  it.each([
    { name: 'one open, none decided', open: [c], decided: 0, heading: '### Conflicts (1)' },
    { name: 'the only one decided', open: [], decided: 1, heading: '### Conflicts (0 open, 1 decided)' },
    {
      name: 'one open, one decided',
      open: [conflict({ path: '.spec.paused', values: { origin: false, upstream: true, local: null } })],
      decided: 1,
      heading: '### Conflicts (1 open, 1 decided)',
    },
  ])('the heading counts the conflicts left to decide: $name', ({ open, decided, heading }) => {
    const text = body(open, { decided: decided ? [{ conflict: c, choice }] : [], ignored: [] });
    expect(text.split('\n').filter((l) => l.startsWith('### Conflicts'))).toEqual([heading]);
  });

  it('taking upstream: the row says it took upstream, with no pin', () => {
    const local = conflict({ winner: 'local', rule: 'both-changed-local-wins' });
    const up = conflictChoice(local)!;
    const text = body([], { decided: [{ conflict: local, choice: up }], ignored: [] });
    expect(text).toContain('| both-changed-local-wins | took upstream (decided on this proposal) |');
    expect(text).toContain(`\n- ${up.label}: decided on this proposal\n`);
  });

  it('a tick not applied is said, with why, and is no box', () => {
    const text = body([c], {
      decided: [],
      ignored: [{ label: 'keep local `5` for `.spec.replicas` (apps/Deployment web)', reason: 'ignored: the field no longer conflicts' }],
    });
    expect(text).toContain(
      '#### Ticks not applied\n\n- keep local \\`5\\` for \\`.spec.replicas\\` (apps/Deployment web): ignored: the field no longer conflicts\n',
    );
    expect(tickedChoices(text)).toEqual([]);
    expect(text).toContain(`- [ ] <!-- kdelta-decide:${choice.id} --> ${choice.label}`);
  });

  it('with no conflict left, a tick not applied is still said', () => {
    const text = body([], { decided: [], ignored: [{ label: choice.label, reason: 'ignored: the field no longer conflicts' }] });
    expect(text).not.toContain('### Conflicts');
    expect(text).toContain(
      '#### Ticks not applied\n\n- keep local \\`6\\` for \\`.spec.replicas\\` (apps/Deployment web): ignored: the field no longer conflicts\n',
    );
  });
});
