import { describe, expect, it } from 'vitest';
import { carryForward, type CarryInput } from './carry.js';
import type { FileContent } from './file-content.js';
import type { Proposal } from './forge/forge.js';
import { lockCommit } from './kptfile-annotations.js';
import { parseMetadataBlock, renderMetadataBlock, renderProposalBodies, type ProposalMetadata } from './proposal-body.js';
import type { BranchCommit, Workspace } from './workspace.js';

// The decision alone, on a workspace in memory; the carry itself, over real git and both forges,
// is run end to end by packages/cli/test/run/carry-forward*.test.ts.

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

/** The base checkout; `onBranchTip` moves to a tip whose files are `tipFiles`. */
function workspace(tipFiles: Map<string, FileContent>, merged = false) {
  const moves: string[] = [];
  const tip = { parent: TIP } as Partial<Workspace>;
  Object.assign(tip, {
    readFile: async (dir: string, file: string) => tipFiles.get(`${dir}/${file}`),
    writeFile: async (dir: string, file: string, text: string) => void tipFiles.set(`${dir}/${file}`, text),
  });
  const ws = {
    baseCommit: BASE,
    remoteHead: TIP,
    isAncestor: async () => merged,
    onBranchTip: async () => {
      moves.push('tip');
      return tip as Workspace;
    },
  } as Partial<Workspace> as Workspace;
  return { ws, tip: tip as Workspace, moves };
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

describe('carryForward', () => {
  it('carries the commits, oldest first, on the tip when the inputs moved', async () => {
    const { ws, tip, moves } = workspace(new Map([['web/Kptfile', kptfile(BUILT)]]));
    const decision = await carryForward(input(ws));
    expect(decision).toEqual({
      kind: 'carry',
      ws: tip,
      carried: [
        { sha: 'd'.repeat(40), name: 'Ann', subject: 'first edit' },
        { sha: 'e'.repeat(40), name: 'Ann', subject: 'second edit' },
      ],
    });
    expect(moves).toEqual(['tip']);
  });

  it('a lock that is the commit the branch was built from is left as it is', async () => {
    const files = new Map<string, FileContent>([['web/Kptfile', kptfile(BUILT)]]);
    expect((await carryForward(input(workspace(files).ws))).kind).toBe('carry');
    expect(files.get('web/Kptfile')).toBe(kptfile(BUILT));
  });

  it('nothing moved (the same fingerprint): not carried, and the branch is not even read', async () => {
    const { ws, moves } = workspace(new Map([['web/Kptfile', kptfile(BUILT)]]));
    let read = false;
    const decision = await carryForward(
      input(ws, {
        fingerprint: 'f-old',
        foreign: async () => {
          read = true;
          return [];
        },
      }),
    );
    expect(decision).toEqual({ kind: 'none' });
    expect([read, moves]).toEqual([false, []]);
  });

  it('not carried: no commit of others, a merged branch, a proposal that does not say what it was built from', async () => {
    const files = new Map([['web/Kptfile', kptfile(BUILT)]]);
    expect(await carryForward(input(workspace(files).ws, { foreign: async () => [] }))).toEqual({ kind: 'none' });
    expect(await carryForward(input(workspace(files, true).ws))).toEqual({ kind: 'none' });
    const removal = { ...open, body: renderMetadataBlock({ ...meta, upstream: undefined, kind: 'removal' }) };
    expect(await carryForward(input(workspace(files).ws, { open: removal }))).toEqual({ kind: 'none' });
  });

  it('a branch whose Kptfile is gone is left alone, and says why', async () => {
    const decision = await carryForward(input(workspace(new Map()).ws));
    expect(decision).toMatchObject({ kind: 'left-alone', reason: 'its web/Kptfile is gone or is not a file' });
  });

  it("the merge's origin is the commit the branch was built from, whatever an edit made of the lock", async () => {
    const files = new Map<string, FileContent>([['web/Kptfile', kptfile('2'.repeat(40))]]);
    const decision = await carryForward(input(workspace(files).ws));
    expect(decision.kind).toBe('carry');
    expect(lockCommit(files.get('web/Kptfile') as string)).toBe(BUILT);
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
