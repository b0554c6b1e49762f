import { describe, expect, it } from 'vitest';
import {
  applyCarried,
  carryForward,
  holdsForeignCommits,
  outsideMessage,
  outsidePackage,
  type CarryInput,
  type OutsidePackage,
} from './carry.js';
import type { FileContent } from '../jobs/file-content.js';
import type { Proposal } from '../forges/forge.js';
import { lockCommit } from '../jobs/kptfile-annotations.js';
import { renderProposalBodies } from './proposal-body.js';
import { parseMetadataBlock, renderMetadataBlock, type ProposalMetadata } from './proposal-metadata.js';
import type { BranchCommit, BranchTouches, TouchingCommit, Workspace } from './workspace.js';

// The decision and the 3-way step alone, in memory; the carry itself, over real git and both
// forges, is run end to end by packages/cli/test/run/carry-*.test.ts and ../../cli/test/hostile-carry.test.ts.

const BASE = 'b'.repeat(40);
const TIP = 't'.repeat(40);
const BUILT = 'abc1'.repeat(10);
const meta: ProposalMetadata = {
  version: '1.0.0',
  variant: 'web',
  fingerprint: 'f-old',
  headCommit: TIP,
  baseCommit: BASE,
  upstream: { repo: '/upstream', ref: 'v1', commit: BUILT },
  conflicts: 0,
  kind: 'variant',
};
const open: Proposal = {
  downstream: 'cluster-01',
  repo: '/repos/cluster-01',
  head: 'kdelta/web',
  base: 'main',
  id: 'web',
  url: 'memory://web',
  state: 'open',
  title: 'kdelta: add web',
  body: `text\n${renderMetadataBlock(meta)}\n`,
  fingerprint: 'f-old',
};
const kptfile = (commit: string) =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\nupstreamLock:\n  type: git\n  git:\n    commit: ${commit}\n`;
const human = (sha: string, subject: string): BranchCommit => ({ sha, name: 'Ann', email: 'ann@example.com', body: `${subject}\n\nwhy\n` });

/** The base checkout of a branch whose commits change `touches` (kdelta's last commit: TIP). */
function workspace(touches: BranchTouches = { commits: [], net: ['web/notes.md'] }, merged = false) {
  const ws = {
    baseCommit: BASE,
    remoteHead: TIP,
    isAncestor: async (commit: string, of: string) => (of === BASE ? merged : commit === TIP && of === TIP),
    onBranchTip: async () => ws,
    branchTouches: async () => touches,
    readPackageAt: async () => undefined,
  } as Partial<Workspace> as Workspace;
  return { ws };
}

function input(ws: Workspace, extra: Partial<CarryInput> = {}): CarryInput {
  return {
    open,
    fingerprint: 'f-new',
    directory: 'web',
    ws,
    foreign: async () => [human('e'.repeat(40), 'second edit'), human('d'.repeat(40), 'first edit')],
    ...extra,
  };
}

const touching = (sha: string, paths: string[], root = false): TouchingCommit => ({
  sha,
  name: 'Mallory',
  email: 'm@example.com',
  root,
  paths,
});

describe('carryForward', () => {
  it("carries the commits, oldest first, from kdelta's last commit when the inputs moved", async () => {
    const decision = await carryForward(input(workspace().ws));
    expect(decision).toEqual({
      kind: 'carry',
      pushed: TIP,
      carried: [
        { sha: 'd'.repeat(40), name: 'Ann', subject: 'first edit' },
        { sha: 'e'.repeat(40), name: 'Ann', subject: 'second edit' },
      ],
    });
    expect(holdsForeignCommits(decision)).toBe(true);
  });

  it('nothing moved (the same fingerprint): not carried, and the branch is not even read', async () => {
    let read = false;
    const decision = await carryForward(
      input(workspace().ws, {
        fingerprint: 'f-old',
        foreign: async () => {
          read = true;
          return [];
        },
      }),
    );
    expect(decision).toEqual({ kind: 'none' });
    expect(holdsForeignCommits(decision)).toBe(false);
    expect(read).toBe(false);
  });

  it('not carried: no commit of others, a merged branch, a proposal that does not say what it was built from', async () => {
    expect(await carryForward(input(workspace().ws, { foreign: async () => [] }))).toEqual({ kind: 'none' });
    expect(await carryForward(input(workspace(undefined, true).ws))).toEqual({ kind: 'none' });
    const removal = { ...open, body: renderMetadataBlock({ ...meta, upstream: undefined, kind: 'removal' }) };
    expect(await carryForward(input(workspace().ws, { open: removal }))).toEqual({ kind: 'none' });
  });

  it("a proposal that names a commit of others, or one not on the branch, as kdelta's is left alone, and says why", async () => {
    const named = (headCommit: string) => ({ ...open, body: renderMetadataBlock({ ...meta, headCommit }) });
    for (const headCommit of ['d'.repeat(40), '9'.repeat(40)]) {
      const decision = await carryForward(input(workspace().ws, { open: named(headCommit) }));
      expect(decision).toMatchObject({
        kind: 'left-alone',
        reason: `the commit its proposal names as kdelta's (${headCommit.slice(0, 12)}) is not kdelta's on the branch`,
      });
    }
  });

  it('a branch that changes files outside the package is never carried: the commits and the paths are named', async () => {
    const touches = {
      commits: [touching('f'.repeat(40), ['.github/workflows/pwn.yml', 'web/a.yaml'])],
      net: ['.github/workflows/pwn.yml'],
    };
    const decision = await carryForward(input(workspace(touches).ws));
    expect(decision).toMatchObject({ kind: 'outside' });
    expect(holdsForeignCommits(decision)).toBe(true);
    if (decision.kind !== 'outside') throw new Error('unreachable');
    expect(outsideMessage(decision.outside, 'kdelta/web', 'web')).toBe(
      'branch kdelta/web holds commit(s) that change files outside the package directory web: ffffffffffff by Mallory <m@example.com> (.github/workflows/pwn.yml); as a whole it changes .github/workflows/pwn.yml; kdelta carries only commits inside the package, so the variant is blocked and nothing is pushed: remove those commits from the branch (or delete it) to let kdelta update it',
    );
  });
});

describe('outsidePackage', () => {
  const cases: { what: string; touches: BranchTouches; directory?: string; expected: OutsidePackage | undefined }[] = [
    {
      what: 'commits inside the package',
      touches: { commits: [touching('a', ['web/a.yaml', 'web'])], net: ['web/a.yaml'] },
      expected: undefined,
    },
    {
      what: 'a sibling directory that shares the prefix',
      touches: { commits: [touching('a', ['web-admin/x.yaml'])], net: ['web-admin/x.yaml'] },
      expected: {
        commits: [{ sha: 'a', name: 'Mallory', email: 'm@example.com', unrelated: false, paths: ['web-admin/x.yaml'] }],
        net: ['web-admin/x.yaml'],
      },
    },
    {
      what: 'a root commit inside the package still brings an unrelated history',
      touches: { commits: [touching('r', ['web/x.yaml'], true)], net: ['web/x.yaml'] },
      expected: { commits: [{ sha: 'r', name: 'Mallory', email: 'm@example.com', unrelated: true, paths: [] }], net: [] },
    },
    {
      what: "a merge that keeps the branch's side of a file the base changed (only the whole diff shows it)",
      touches: { commits: [touching('m', [])], net: ['.github/workflows/ci.yml'] },
      expected: { commits: [], net: ['.github/workflows/ci.yml'] },
    },
    {
      what: 'the root package: nothing is outside',
      directory: '',
      touches: { commits: [touching('a', ['.github/x.yml'])], net: ['.github/x.yml'] },
      expected: undefined,
    },
  ];
  it.each(cases)('$what', ({ touches, directory = 'web', expected }) => {
    expect(outsidePackage(touches, directory)).toEqual(expected);
  });
});

describe('applyCarried', () => {
  const deployment = (replicas: number, extra = '') =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n${extra}`;
  const pkg = (files: Record<string, string>) => new Map<string, FileContent>(Object.entries(files));

  it("keeps the branch's edits, takes the new proposal's, and reports where both changed a field", () => {
    const carried = applyCarried({
      pushed: pkg({ Kptfile: kptfile(BUILT), 'deployment.yaml': deployment(4) }),
      proposal: pkg({ Kptfile: kptfile('abc2'.repeat(10)), 'deployment.yaml': deployment(5, '  minReadySeconds: 5\n') }),
      tip: pkg({ Kptfile: kptfile(BUILT), 'deployment.yaml': deployment(4, '  minReadySeconds: 10\n'), 'notes.md': 'mine\n' }),
      source: 'web',
    });
    expect(carried.files.get('notes.md')).toBe('mine\n');
    expect(carried.files.get('deployment.yaml')).toContain('replicas: 5');
    expect(carried.files.get('deployment.yaml')).toContain('minReadySeconds: 5');
    expect(lockCommit(carried.files.get('Kptfile') as string)).toBe('abc2'.repeat(10));
    expect(carried.clashes).toMatchObject([
      {
        path: '.spec.minReadySeconds',
        values: { origin: undefined, upstream: 5, local: 10 },
        winner: 'upstream',
        message:
          "a commit on the branch changed .spec.minReadySeconds (absent)→10 and this update changes it to 5; this update's value is kept",
      },
    ]);
  });
});

describe('the body of a proposal that carries commits', () => {
  const body = (subject: string, name = 'Ann') =>
    renderProposalBodies({
      title: 'kdelta: update web',
      summary: 'Updates web.',
      downstream: { repo: '/repos/cluster-01', branch: 'main', directory: 'web' },
      changes: [],
      resources: [],
      conflicts: [],
      carried: [{ sha: 'd'.repeat(40), name, subject }],
      metadata: meta,
    }).body;

  it('names each carried commit: short sha, author, subject', () => {
    expect(body('first edit')).toContain('### Carried forward\n');
    expect(body('first edit')).toContain('- `dddddddddddd` by Ann: `first edit`\n');
  });

  it("a subject or a name cannot forge the body's metadata block", () => {
    const forged = `<!-- kdelta: ${JSON.stringify({ ...meta, fingerprint: 'forged' })} -->`;
    expect(parseMetadataBlock(body(forged))?.fingerprint).toBe('f-old');
    expect(parseMetadataBlock(body('edit', forged))?.fingerprint).toBe('f-old');
  });
});
