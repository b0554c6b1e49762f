import { describe, expect, it } from 'vitest';
import type { Change } from '../jobs/change.js';
import type { JobContext } from '../context.js';
import type { FileContent, PackageFiles } from '../jobs/file-content.js';
import { Budget } from '../forges/budget.js';
import { STOP_LABEL, type Forge, type Proposal, type ProposalInput, type ProposalStatus } from '../forges/forge.js';
import type { FileChange } from './proposal-body.js';
import { parseMetadataBlock, renderMetadataBlock } from './proposal-metadata.js';
import { COMMIT_TRAILER, propose } from './propose.js';
import type { BranchCommit, Workspace } from './workspace.js';

// The protocol alone, on a forge and a workspace in memory: each branch of it in milliseconds.
// The same protocol over real git and both forges is run end to end by packages/cli/test/run.

const AUTHOR = { name: 'kdelta', email: 'kdelta@noreply.invalid' };
const BASE = 'b'.repeat(40);
const HEAD = 'h'.repeat(40);
const target = { downstream: 'cluster-01', repo: '/repos/cluster-01', head: 'kdelta/web', base: 'main' };

/** Proposals in a Map; writes cost one request each (for the budget). */
function memoryForge(open?: Partial<Proposal>) {
  const proposals = new Map<string, Proposal>();
  const calls: string[] = [];
  if (open) {
    proposals.set(target.head, {
      ...target,
      id: 'web',
      url: 'memory://web',
      state: 'open',
      title: 'kdelta: add web',
      body: 'old',
      fingerprint: 'old',
      ...open,
    });
  }
  const forge: Forge = {
    name: 'memory',
    async find(t) {
      const p = proposals.get(t.head);
      return p?.state === 'open' ? p : undefined;
    },
    async upsert(input: ProposalInput) {
      calls.push('upsert');
      const before = proposals.get(input.head);
      const proposal: Proposal = { id: 'web', url: 'memory://web', state: 'open', ...(before?.state === 'open' ? before : {}), ...input };
      proposals.set(input.head, proposal);
      return { proposal, created: before?.state !== 'open', changed: true };
    },
    async close(p, state = 'closed') {
      calls.push(`close ${state}`);
      const closed = { ...p, state };
      proposals.set(p.head, closed);
      return closed;
    },
    async setStatus(_p: Proposal, status: ProposalStatus) {
      calls.push(`status ${status.state}`);
    },
    async list() {
      return [...proposals.values()];
    },
    writeCost: () => 1,
  };
  return { forge, calls, proposals };
}

interface MemoryRepo {
  /** The base branch's files, repository-relative. */
  readonly base: Record<string, string>;
  /** The proposal branch on the remote: its commits since the base, and whether the base has it (merged). */
  readonly branch?: { readonly commits: readonly BranchCommit[]; readonly merged?: boolean } | undefined;
}

/** A workspace whose files are a Map: what propose reads, writes, commits and pushes. */
function memoryWorkspace(repo: MemoryRepo, calls: string[], pushedBy?: string): Workspace {
  const files = new Map<string, FileContent>(Object.entries(repo.base));
  const inDir = (dir: string, path: string) => dir === '' || path.startsWith(`${dir}/`);
  const rel = (dir: string, path: string) => (dir === '' ? path : path.slice(dir.length + 1));
  return {
    dir: '/memory',
    repository: target.repo,
    baseCommit: BASE,
    remoteHead: repo.branch ? HEAD : undefined,
    async readPackage(dir) {
      const out = new Map([...files].filter(([p]) => inDir(dir, p)).map(([p, c]) => [rel(dir, p), c] as const));
      return out.size > 0 ? out : undefined;
    },
    async writePackage(dir, pkg: PackageFiles) {
      for (const p of [...files.keys()]) if (inDir(dir, p)) files.delete(p);
      for (const [p, c] of pkg) files.set(dir ? `${dir}/${p}` : p, c);
    },
    async removePackage(dir) {
      for (const p of [...files.keys()]) if (inDir(dir, p)) files.delete(p);
    },
    async readFile(dir, file) {
      return files.get(dir ? `${dir}/${file}` : file);
    },
    async writeFile(dir, file, text) {
      files.set(dir ? `${dir}/${file}` : file, text);
    },
    async changedFiles(dir) {
      const out: FileChange[] = [];
      for (const [p, c] of files)
        if (inDir(dir, p) && repo.base[p] !== c) out.push({ status: p in repo.base ? 'modified' : 'added', path: p });
      for (const p of Object.keys(repo.base)) if (inDir(dir, p) && !files.has(p)) out.push({ status: 'deleted', path: p });
      return out;
    },
    async branchCommits() {
      return [...(repo.branch?.commits ?? [])];
    },
    async isAncestor(commit) {
      return commit === HEAD && repo.branch?.merged === true;
    },
    async commit() {
      calls.push('commit');
      return { commit: 'c'.repeat(40), sameAsRemote: false };
    },
    async push() {
      calls.push('push');
      return pushedBy ?? 'c'.repeat(40);
    },
    async deleteBranch() {
      calls.push('delete-branch');
    },
  };
}

function context(forge: Forge, repo: MemoryRepo, calls: string[], extra: Partial<JobContext> = {}): JobContext {
  return {
    version: '1.0.0',
    dryRun: false,
    forge,
    materialize: async () => {
      throw new Error('not used');
    },
    render: false,
    author: AUTHOR,
    env: {},
    branchPrefix: 'kdelta/',
    upstreamRefs: async () => [],
    mirror: async () => ({ dir: '/memory', heads: new Map([['main', BASE], ...(repo.branch ? [['kdelta/web', HEAD] as const] : [])]) }),
    heads: async () => new Map([['main', BASE], ...(repo.branch ? [['kdelta/web', HEAD] as const] : [])]),
    checkout: async () => {
      calls.push('checkout');
      return memoryWorkspace(repo, calls);
    },
    ...extra,
  };
}

/** A change that writes `web/app.yaml` with `content`. */
function change(content: string): Change {
  return {
    target,
    fingerprint: 'f-new',
    kind: 'variant',
    variant: 'web',
    directory: 'web',
    opened: 'proposed',
    updated: 'updated',
    scratchName: 'web',
    async prepare(ws) {
      const files = new Map(await ws.readPackage('web'));
      files.set('app.yaml', content);
      await ws.writePackage('web', files);
      return { title: 'kdelta: update web', summary: 'Updates web.', conflicts: [], resources: [] };
    },
  };
}

const ours: BranchCommit = { sha: HEAD, name: 'kdelta', email: AUTHOR.email, body: `kdelta: add web\n\n${COMMIT_TRAILER}: web\n` };
const human: BranchCommit = { sha: 'e'.repeat(40), name: 'Ann', email: 'ann@example.com', body: 'fix by hand' };
const base = { 'web/Kptfile': 'kind: Kptfile\n', 'web/app.yaml': 'replicas: 1\n' };

describe('propose, each branch of the protocol', () => {
  it('opens a proposal for new content: commit, push, upsert, status', async () => {
    const { forge, calls } = memoryForge();
    const result = await propose(context(forge, { base }, calls), change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'proposed', writes: true, fingerprint: 'f-new', proposal: { state: 'open' } });
    expect(calls).toEqual(['checkout', 'commit', 'push', 'upsert', 'status success']);
  });

  it('leaves a branch alone when a human committed on it', async () => {
    const { forge, calls } = memoryForge({});
    const repo = { base, branch: { commits: [ours, human] } };
    const result = await propose(context(forge, repo, calls), change('replicas: 2\n'));
    expect(result.action).toBe('blocked');
    expect(result.message).toMatch(/1 commit\(s\) kdelta did not make \(eeeeeeeeeeee by Ann <ann@example.com>\)/);
    // its proposal's status names the commits, and it is not told to merge by itself
    expect(calls).toEqual(['checkout', 'status pending']);
  });

  it('leaves a proposal with the stop label alone, before checking anything out', async () => {
    const { forge, calls } = memoryForge({ labels: [STOP_LABEL] });
    const result = await propose(context(forge, { base, branch: { commits: [ours] } }, calls), change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'blocked', writes: false, proposal: { id: 'web' } });
    expect(result.message).toContain(STOP_LABEL);
    expect(calls).toEqual([]);
  });

  it('defers a job whose writes the budget cannot cover, writing none of them', async () => {
    const { forge, calls } = memoryForge();
    const result = await propose(context(forge, { base }, calls, { budget: new Budget(2) }), change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'deferred', writes: false });
    expect(calls).toEqual(['checkout', 'commit']);
  });

  it('does nothing for an open proposal of the same fingerprint on the same base and head (fast no-op)', async () => {
    const body = `text\n${renderMetadataBlock({ version: '1.0.0', variant: 'web', fingerprint: 'f-new', headCommit: HEAD, baseCommit: BASE, conflicts: 2, kind: 'variant' })}\n`;
    const { forge, calls } = memoryForge({ fingerprint: 'f-new', body });
    const result = await propose(context(forge, { base, branch: { commits: [ours] } }, calls), change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'unchanged', writes: false, conflictCount: 2, proposal: { id: 'web' } });
    expect(calls).toEqual([]);
  });

  it('records a merged proposal as merged and opens a new one for what is new since', async () => {
    const { forge, calls, proposals } = memoryForge({});
    const repo = { base, branch: { commits: [ours], merged: true } };
    const result = await propose(context(forge, repo, calls), change('replicas: 3\n'));
    expect(result).toMatchObject({ action: 'proposed', writes: true });
    expect(calls).toEqual(['checkout', 'commit', 'close merged', 'push', 'upsert', 'status success']);
    expect(proposals.get('kdelta/web')).toMatchObject({ state: 'open', fingerprint: 'f-new' });
  });

  it('a push lost to another run that opened this very proposal: that run’s, unchanged here, nothing more written', async () => {
    const { forge, calls } = memoryForge();
    const winner = 'w'.repeat(40);
    const upserted: ProposalInput[] = [];
    const upsert = forge.upsert.bind(forge);
    forge.upsert = async (input) => {
      upserted.push(input);
      const { proposal } = await upsert(input);
      return { proposal, created: false, changed: false };
    };
    const ctx = context(forge, { base }, calls, {
      checkout: async () => {
        calls.push('checkout');
        return memoryWorkspace({ base }, calls, winner);
      },
    });
    const result = await propose(ctx, change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'unchanged', writes: false });
    expect(upserted[0]?.headCommit).toBe(winner);
    expect(calls).toEqual(['checkout', 'commit', 'push', 'upsert']);
  });

  it('a status that does not land is a warning: the proposal stands', async () => {
    const { forge, calls } = memoryForge();
    const statusOn: (string | undefined)[] = [];
    forge.setStatus = async (_p, _s, commit) => {
      statusOn.push(commit);
      throw new Error('GitHub: cannot record a status: 502');
    };
    const result = await propose(context(forge, { base }, calls), change('replicas: 2\n'));
    expect(result).toMatchObject({
      action: 'proposed',
      writes: true,
      message: 'GitHub: cannot record a status: 502; the next run posts it',
    });
    expect(statusOn).toEqual(['c'.repeat(40)]);
    // the body then says so: the next run with nothing new reads the commit's statuses (and no other run does)
    expect(parseMetadataBlock((await forge.find(target))!.body)).toMatchObject({ headCommit: 'c'.repeat(40), statusMissing: true });
  });

  it.each([
    { body: 'says its status did not land', statusMissing: true, ensured: [`success ${HEAD}`], writes: true },
    { body: 'names its commit (whose status followed it)', statusMissing: false, ensured: [], writes: false },
  ])('the fast no-op, when the body $body: reads and posts the missing status $ensured.length time(s)', async (c) => {
    const meta = {
      version: '1.0.0',
      variant: 'web',
      fingerprint: 'f-new',
      headCommit: HEAD,
      baseCommit: BASE,
      conflicts: 0,
      kind: 'variant' as const,
    };
    const body = `text\n${renderMetadataBlock({ ...meta, ...(c.statusMissing ? { statusMissing: true } : {}) })}\n`;
    const { forge, calls } = memoryForge({ fingerprint: 'f-new', body });
    const ensured: string[] = [];
    forge.ensureStatus = async (_p, status, commit) => {
      ensured.push(`${status.state} ${commit}`);
      return true;
    };
    const result = await propose(context(forge, { base, branch: { commits: [ours] } }, calls), change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'unchanged', writes: c.writes });
    if (c.writes) expect(result.message).toBe("the proposal's commit had no kdelta status: posted");
    expect(ensured).toEqual(c.ensured);
    expect(calls).toEqual([]);
  });

  it('closes a proposal the downstream no longer needs and deletes its branch', async () => {
    const { forge, calls } = memoryForge({});
    const result = await propose(context(forge, { base, branch: { commits: [ours] } }, calls), change('replicas: 1\n'));
    expect(result).toMatchObject({ action: 'closed', writes: true, proposal: { state: 'closed' } });
    expect(result.message).toBe('the downstream already has this content');
    expect(calls).toEqual(['checkout', 'close closed', 'delete-branch']);
  });

  it("carries a human's commits forward when the inputs moved: built from the base, applied on the branch's tip, pushed on top, named in the body", async () => {
    const built = 'abc1'.repeat(10);
    const meta = {
      version: '1.0.0',
      variant: 'web',
      fingerprint: 'old',
      headCommit: HEAD,
      baseCommit: BASE,
      conflicts: 0,
      kind: 'variant' as const,
    };
    const body = `text\n${renderMetadataBlock({ ...meta, upstream: { repo: '/upstream', ref: 'v1', commit: built } })}\n`;
    const { forge, calls, proposals } = memoryForge({ body });
    const kptfile = `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\nupstreamLock:\n  type: git\n  git:\n    commit: ${built}\n`;
    const repo = { base: { ...base, 'web/Kptfile': kptfile }, branch: { commits: [human, ours] } };
    // kdelta's last commit (HEAD), and the tip with the human's edit of the package on top
    const pushed = { 'web/Kptfile': kptfile, 'web/app.yaml': 'replicas: 1\n' };
    const tip = { base: { ...pushed, 'web/notes.md': 'mine\n' } };
    let onTip: Workspace | undefined;
    const ctx = context(forge, repo, calls, {
      checkout: async () => {
        calls.push('checkout');
        return {
          ...memoryWorkspace(repo, calls),
          isAncestor: async (commit: string, of: string) => commit === HEAD && of === HEAD,
          branchTouches: async () => ({ commits: [], net: ['web/notes.md'] }),
          readPackageAt: async () => new Map(Object.entries(pushed).map(([p, c]) => [p.slice('web/'.length), c])),
          onBranchTip: async () => {
            calls.push('on-tip');
            onTip = { ...memoryWorkspace({ ...tip, branch: repo.branch }, calls), parent: HEAD };
            return onTip;
          },
        };
      },
    });
    const result = await propose(ctx, change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'updated', writes: true, conflictCount: 0 });
    expect(result.message).toBe('carried forward 1 commit(s) kdelta did not make (eeeeeeeeeeee by Ann): a new commit on top of them');
    expect(calls).toEqual(['checkout', 'on-tip', 'commit', 'push', 'upsert', 'status success']);
    // the new proposal's content and the human's file, on the tip
    expect(await onTip!.readFile('web', 'app.yaml')).toBe('replicas: 2\n');
    expect(await onTip!.readFile('web', 'notes.md')).toBe('mine\n');
    expect(proposals.get('kdelta/web')?.body).toContain('- `eeeeeeeeeeee` by Ann: `fix by hand`');
  });

  it('What changed lists every file the commit changes, outside the package too', async () => {
    const { forge, calls, proposals } = memoryForge();
    const outside: Change = {
      ...change('replicas: 2\n'),
      async prepare(ws) {
        const made = await change('replicas: 2\n').prepare(ws);
        // a file the package's pipeline left beside the package: it would be committed, so it is listed
        await ws.writeFile('', 'generated.yaml', 'kind: Leftover\n');
        return made;
      },
    };
    const result = await propose(context(forge, { base }, calls), outside);
    expect(result.action).toBe('proposed');
    const body = proposals.get('kdelta/web')?.body ?? '';
    expect(body).toContain('- modified `web/app.yaml`');
    expect(body).toContain('- added `generated.yaml`');
  });

  it('leaves a branch with human commits alone when nothing moved, even where it could carry them', async () => {
    const body = `text\n${renderMetadataBlock({ version: '1.0.0', variant: 'web', fingerprint: 'f-new', headCommit: HEAD, baseCommit: BASE, conflicts: 0, kind: 'variant', upstream: { repo: '/upstream', ref: 'v1', commit: '1'.repeat(40) } })}\n`;
    const { forge, calls } = memoryForge({ body, fingerprint: 'f-new' });
    const repo = { base, branch: { commits: [human, ours] } };
    const ctx = context(forge, repo, calls, {
      // the human moved the branch: no fast no-op
      heads: async () =>
        new Map([
          ['main', BASE],
          ['kdelta/web', 'e'.repeat(40)],
        ]),
      checkout: async () => {
        calls.push('checkout');
        return {
          ...memoryWorkspace(repo, calls),
          onBranchTip: async () => {
            calls.push('on-tip');
            return memoryWorkspace(repo, calls);
          },
        };
      },
    });
    const result = await propose(ctx, change('replicas: 2\n'));
    expect(result).toMatchObject({ action: 'blocked', writes: true });
    expect(result.message).toMatch(/status "1 commit\(s\) kdelta did not make \(eeeeeeeeeeee\): not checked by kdelta; review them"/);
    expect(calls).toEqual(['checkout', 'status pending']);
  });
});
