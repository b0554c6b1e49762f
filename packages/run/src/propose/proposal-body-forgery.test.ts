import { createHash } from 'node:crypto';
import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import {
  MAX_BODY,
  pendingTicks,
  renderProposalBodies,
  tickedChoices,
  type CarriedCommit,
  type ProposalBodyInput,
} from './proposal-body.js';
import { closedByOf, markClosed, parseMetadataBlock } from './proposal-metadata.js';

// Package text, downstream text and commits kdelta did not make are strangers' text: none of it
// may stand in for kdelta's metadata block or tick a box nobody ticked.

const metadata = {
  version: '1.0.0',
  variant: 'web',
  fingerprint: 'f'.repeat(32),
  headCommit: 'a'.repeat(40),
  baseCommit: 'b'.repeat(40),
  conflicts: 1,
  kind: 'variant' as const,
};

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

function input(over: Partial<ProposalBodyInput> = {}): ProposalBodyInput {
  return {
    title: 'kdelta: update web (web) to v2',
    summary: 'Updates package `web`.',
    downstream: { repo: 'https://github.com/org/cluster-01', branch: 'main', directory: 'web' },
    changes: [{ status: 'modified', path: 'web/deploy.yaml' }],
    resources: [],
    conflicts: [conflict()],
    metadata,
    ...over,
  };
}

const body = (over: Partial<ProposalBodyInput> = {}) => renderProposalBodies(input(over)).body;

/** The id a box of kdelta's carries for the conflict above: anyone can compute it, so knowing it must not be enough. */
const realId = createHash('sha256')
  .update(JSON.stringify(['apps/Deployment web', '.spec.replicas', 'local', 6, 4]))
  .digest('hex')
  .slice(0, 16);

/** Short enough to pass whole where a value is cut to 77 characters. */
const forgedBlock = '<!-- kdelta: {"fingerprint":"forged","closedBy":"closed"} -->';
const resource = (name: string, file = 'deploy.yaml'): ResourceReport =>
  ({ resource: name, file, action: 'merged', changed: true }) as unknown as ResourceReport;

describe('the metadata block is read only at the end of the body', () => {
  it.each([
    { name: 'a resource kind carrying the block', over: { resources: [resource(`apps/${forgedBlock} web`)] } },
    { name: 'a file named with the block', over: { changes: [{ status: 'added' as const, path: `web/${forgedBlock}.yaml` }] } },
    {
      name: 'a conflict value carrying the block',
      over: { conflicts: [conflict({ values: { origin: 3, upstream: forgedBlock, local: 6 } })] },
    },
    { name: 'a file named with the opener only', over: { changes: [{ status: 'added' as const, path: 'web/<!-- kdelta: {x} -->' }] } },
    {
      name: "a carried commit's subject carrying the block",
      over: { carried: [{ sha: 'c'.repeat(40), name: 'dev', subject: forgedBlock } satisfies CarriedCommit] },
    },
  ])("$name: kdelta's block wins, a person's close stays a decline", ({ over }) => {
    const text = body(over);
    expect(parseMetadataBlock(text)).toMatchObject({ fingerprint: metadata.fingerprint });
    expect(parseMetadataBlock(text)?.decided).toBeUndefined();
    expect(parseMetadataBlock(text)?.closedBy).toBeUndefined();
    // closed by a person (the body unmarked): a decline, never kdelta's own close
    expect(closedByOf(text)).toEqual({ by: 'person' });
    // kdelta's close marks its own block, and only it
    const closed = markClosed(text, 'closed');
    expect(closedByOf(closed)).toEqual({ by: 'kdelta', state: 'closed' });
    expect(closed.replace(/<!-- kdelta: \{[^\n]*\} -->\n*$/, '')).toBe(text.replace(/<!-- kdelta: \{[^\n]*\} -->\n*$/, ''));
    // no opener of a hidden comment other than kdelta's own markers
    expect(text.match(/<!--/g)?.length).toBe((text.match(/<!-- kdelta(?:: \{|-decide:[0-9a-f]{16} -->)/g) ?? []).length);
  });

  it('a body cut before its block has no metadata (its decisions are not read as none)', () => {
    const text = body();
    const cut = text.slice(0, text.indexOf('<!-- kdelta: {'));
    expect(parseMetadataBlock(cut)).toBeUndefined();
    expect(closedByOf(cut)).toBeUndefined();
  });
});

describe('a tick is read only from a box kdelta wrote in its Decide section', () => {
  const label = 'keep local `6` for `.spec.replicas` (apps/Deployment web)';
  // a box as kdelta writes it, and the bare label an earlier parser took for one
  const forgedLine = (br: string) => `${br}- [x] <!-- kdelta-decide:${realId} --> ${label}${br}- [x] ${label}${br}`;
  it.each(['\r', '\u2028', '\u2029', '\n', '\r\n'])('a line break %j in a value, a name or a subject starts no box', (br) => {
    const text = body({
      conflicts: [conflict(), conflict({ path: '.spec.paused', values: { origin: 'a', upstream: `b${forgedLine(br)}`, local: 'c' } })],
      resources: [resource(`apps/Deployment x${forgedLine(br)}`)],
      carried: [{ sha: 'c'.repeat(40), name: `dev${forgedLine(br)}`, subject: `fix${forgedLine(br)}` }],
    });
    expect(tickedChoices(text)).toEqual([]);
    expect(pendingTicks(text)).toEqual([]);
  });
});

describe('sizes: the conflicts and their boxes stay in the body', () => {
  const many = Array.from({ length: 1500 }, (_, i) =>
    conflict({ resource: `apps/Deployment web-${i}`, file: `deploy-${i}.yaml`, path: '.spec.replicas' }),
  );
  const long = `apps/Deployment ${'n'.repeat(70_000)}`;
  it.each([
    {
      name: '1,500 conflicts, each resource in the table',
      over: {
        conflicts: many,
        resources: many.map((c) => resource(c.resource, c.file)),
        changes: many.map((c) => ({ status: 'modified' as const, path: `web/${c.file}` })),
      },
    },
    { name: 'a resource name of 70,000 characters', over: { conflicts: [conflict({ resource: long })], resources: [resource(long)] } },
  ])('$name: the body fits and keeps boxes to tick', ({ over }) => {
    const { body: text } = renderProposalBodies(input({ ...over, metadata: { ...metadata, conflicts: over.conflicts.length } }));
    expect(text.length).toBeLessThanOrEqual(MAX_BODY);
    expect(text).toMatch(/^- \[ \] /m);
    expect(text).not.toContain("The list is in the run's report.");
    expect(parseMetadataBlock(text)?.fingerprint).toBe(metadata.fingerprint);
  });
});
