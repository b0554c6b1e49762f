import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseYamlDocument, stringifyYaml } from '@kdelta/merge-core';
import { withoutCredentials } from '@kdelta/git-source';
import { writeFileAtomic } from '@kdelta/kptfile-model';
import type {
  DashboardRecord,
  DashboardTarget,
  Forge,
  Proposal,
  ProposalInput,
  ProposalState,
  ProposalStatus,
  ProposalTarget,
  UpsertResult,
} from './forge.js';
import { ForgeError } from './errors.js';
import { localSignal, readLocalStatuses } from './local-statuses.js';

/**
 * The local forge: each proposal is a Markdown file `<dir>/<downstream>/<variant>.md` — a small
 * YAML header (title, head, base, state, fingerprint) over the body a reviewer reads. One file
 * per head branch: a re-run rewrites it (only when something changed), a closed one says so.
 */
export interface LocalForgeOptions {
  /** The proposals directory (default in a run: `<config>/proposals`). */
  readonly dir: string;
  /** Shown as the proposal's url: paths relative to this directory (default: absolute). */
  readonly displayRoot?: string;
  /** The run's branch prefix, left out of file names (default `kdelta/`). */
  readonly branchPrefix?: string;
  /** The clock a new record's `createdAt` is read from (default: the system's). */
  readonly now?: () => Date;
}

const SAFE = /^[A-Za-z0-9._-]+$/;

/** Records list() reads at the same time. */
const LIST_BATCH = 32;

function segment(what: string, value: string): string {
  if (!SAFE.test(value) || value === '.' || value === '..') {
    throw new ForgeError('invalid-name', `local forge: ${what} "${value}" cannot name a file (letters, digits, ".", "_" and "-" only)`);
  }
  return value;
}

/** `kdelta/web-1` → `web-1` (variant names are DNS labels, so they are safe file names). */
function variantNameOf(head: string, prefix: string): string {
  return segment('head branch', (head.startsWith(prefix) ? head.slice(prefix.length) : head).replace(/\//g, '_'));
}

interface Header {
  title: string;
  head: string;
  base: string;
  state: ProposalState;
  fingerprint: string;
  downstream: string;
  repo: string;
  /** Recorded only when there are some (a draft on GitHub). */
  conflicts?: number | undefined;
  /** Recorded only when true (a draft on GitHub, never auto-merged). */
  renderFailed?: boolean | undefined;
  /** Recorded only when true: the run found it not ready for review (a draft on GitHub). */
  draft?: boolean | undefined;
  /** Recorded only when true: an update policy asked for auto-merge and the run let it (GitHub's auto-merge). */
  autoMerge?: boolean | undefined;
  status?: ProposalStatus | undefined;
  /** When the proposal was opened (ISO 8601): the policies' "new per hour" counts it. Older records have none. */
  createdAt?: string | undefined;
}

export function renderRecord(h: Header, body: string): string {
  const header: Record<string, unknown> = {
    title: h.title,
    head: h.head,
    base: h.base,
    state: h.state,
    fingerprint: h.fingerprint,
    downstream: h.downstream,
    // a record is a file: the repository's credentials (a Repository may give some) stay out
    repo: withoutCredentials(h.repo),
  };
  if (h.conflicts) header.conflicts = h.conflicts;
  if (h.renderFailed) header.renderFailed = true;
  if (h.draft) header.draft = true;
  if (h.autoMerge) header.autoMerge = true;
  if (h.status) header.status = { state: h.status.state, description: h.status.description };
  if (h.createdAt) header.createdAt = h.createdAt;
  return `---\n${stringifyYaml(header, { lineWidth: 0 })}---\n\n${body.endsWith('\n') ? body : `${body}\n`}`;
}

export function parseRecord(text: string, file: string): { header: Header; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n\n?([\s\S]*)$/.exec(text);
  if (!m) throw new ForgeError('invalid-proposal-record', `${file}: not a kdelta proposal record (expected a "---" YAML header)`);
  const doc = parseYamlDocument(m[1]!);
  if (doc.errors.length > 0) throw new ForgeError('invalid-proposal-record', `${file}: header: ${doc.errors[0]!.message.split('\n')[0]}`);
  const h = doc.toJS() as Record<string, unknown>;
  const str = (k: string) => {
    const v = h?.[k];
    if (typeof v !== 'string') throw new ForgeError('invalid-proposal-record', `${file}: header field "${k}" is missing or not a string`);
    return v;
  };
  const state = str('state');
  if (state !== 'open' && state !== 'closed' && state !== 'merged' && state !== 'declined')
    throw new ForgeError(
      'invalid-proposal-record',
      `${file}: header field "state" must be open, closed, merged or declined (got "${state}")`,
    );
  const status = h.status as ProposalStatus | undefined;
  const conflicts = h.conflicts;
  if (conflicts !== undefined && (typeof conflicts !== 'number' || !Number.isInteger(conflicts) || conflicts < 0))
    throw new ForgeError(
      'invalid-proposal-record',
      `${file}: header field "conflicts" must be a whole number (got ${JSON.stringify(conflicts)})`,
    );
  const renderFailed = h.renderFailed;
  if (renderFailed !== undefined && typeof renderFailed !== 'boolean')
    throw new ForgeError(
      'invalid-proposal-record',
      `${file}: header field "renderFailed" must be true or false (got ${JSON.stringify(renderFailed)})`,
    );
  const draft = h.draft;
  if (draft !== undefined && typeof draft !== 'boolean')
    throw new ForgeError('invalid-proposal-record', `${file}: header field "draft" must be true or false (got ${JSON.stringify(draft)})`);
  const createdAt = h.createdAt;
  if (createdAt !== undefined && (typeof createdAt !== 'string' || Number.isNaN(Date.parse(createdAt))))
    throw new ForgeError(
      'invalid-proposal-record',
      `${file}: header field "createdAt" must be an ISO 8601 date-time (got ${JSON.stringify(createdAt)})`,
    );
  const autoMerge = h.autoMerge;
  if (autoMerge !== undefined && typeof autoMerge !== 'boolean')
    throw new ForgeError(
      'invalid-proposal-record',
      `${file}: header field "autoMerge" must be true or false (got ${JSON.stringify(autoMerge)})`,
    );
  return {
    header: {
      title: str('title'),
      head: str('head'),
      base: str('base'),
      state,
      fingerprint: str('fingerprint'),
      downstream: str('downstream'),
      repo: str('repo'),
      ...(conflicts ? { conflicts } : {}),
      ...(renderFailed ? { renderFailed } : {}),
      ...(draft ? { draft } : {}),
      ...(autoMerge ? { autoMerge } : {}),
      status,
      ...(createdAt ? { createdAt } : {}),
    },
    body: m[2]!,
  };
}

export function createLocalForge(options: LocalForgeOptions): Forge {
  const prefix = options.branchPrefix ?? 'kdelta/';
  const now = options.now ?? (() => new Date());
  const variantOf = (head: string) => variantNameOf(head, prefix);
  const fileOf = (t: { downstream: string; head: string }) =>
    join(options.dir, segment('downstream', t.downstream), `${variantOf(t.head)}.md`);
  const urlOf = (file: string) => (options.displayRoot ? relative(options.displayRoot, file) : file);

  // The last text read from each record and its parse: a run lists every record (merged removals),
  // then each job finds its own, and a header's YAML is parsed once while its text is the same.
  const parsed = new Map<string, { text: string; record: ReturnType<typeof parseRecord> }>();

  async function read(file: string): Promise<Proposal | undefined> {
    let text: string;
    try {
      // a record is a few KiB on this machine's disk: one synchronous read costs a fraction of the
      // four steps of a promise's (open, stat, read, close), and a run reads every record
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const known = parsed.get(file);
    const record = known?.text === text ? known.record : parseRecord(text, urlOf(file));
    parsed.set(file, { text, record });
    const { header, body } = record;
    return { ...header, body, id: `${header.downstream}/${variantOf(header.head)}`, url: urlOf(file) };
  }

  async function write(p: Proposal): Promise<boolean> {
    const file = fileOf(p);
    const text = renderRecord(p, p.body);
    const before = await readFile(file, 'utf8').catch(() => undefined);
    if (before === text) return false;
    await writeFileAtomic(file, text);
    return true;
  }

  return {
    name: 'local',
    recordOf: (target) => urlOf(fileOf(target)),
    async find(target: ProposalTarget) {
      const p = await read(fileOf(target));
      return p && p.state === 'open' && p.base === target.base && p.head === target.head ? p : undefined;
    },
    async upsert(input: ProposalInput): Promise<UpsertResult> {
      const file = fileOf(input);
      const existing = await read(file);
      const created = existing?.state !== 'open';
      const { conflicts, renderFailed, review, ...rest } = input;
      // the run's decision (review-gate.ts); none given: as it was
      const draft = review?.draft !== undefined ? review.draft : !created && existing?.draft === true;
      // no auto-merge setting here: only an update policy asks for it (and the gate lets it)
      const autoMerge = review ? review.autoMerge && review.autoMergeAsked === true : !created && existing?.autoMerge === true;
      const proposal: Proposal = {
        ...rest,
        ...(conflicts ? { conflicts } : {}),
        ...(renderFailed ? { renderFailed } : {}),
        ...(draft ? { draft } : {}),
        ...(autoMerge ? { autoMerge } : {}),
        id: `${input.downstream}/${variantOf(input.head)}`,
        state: 'open',
        url: urlOf(file),
        status: created ? undefined : existing?.status,
        // opened now, or when the open one was (a record older than the field has none)
        ...(created ? { createdAt: now().toISOString() } : existing?.createdAt ? { createdAt: existing.createdAt } : {}),
      };
      const changed = await write(proposal);
      return { proposal, created, changed };
    },
    async declined(target: ProposalTarget) {
      const p = await read(fileOf(target));
      return p && p.state === 'declined' && p.base === target.base && p.head === target.head ? p : undefined;
    },
    async close(proposal: Proposal, state: 'closed' | 'merged' | 'declined' = 'closed') {
      // merged, a render failure is history: the record no longer says the proposal's render fails (nor that it was a draft)
      const { renderFailed, draft, autoMerge, ...rest } = proposal;
      const closed: Proposal = state === 'merged' ? { ...rest, state } : { ...proposal, state };
      await write(closed);
      return closed;
    },
    async setStatus(proposal: Proposal, status: ProposalStatus) {
      const current = (await read(fileOf(proposal))) ?? proposal;
      await write({ ...current, status });
    },
    // The dashboard is a Markdown file beside the downstreams' folders (which list() reads): `<dir>/dashboard.md`.
    async readDashboard(target: DashboardTarget): Promise<DashboardRecord | undefined> {
      const file = join(options.dir, `${segment('dashboard', target.name)}.md`);
      try {
        return { id: urlOf(file), body: await readFile(file, 'utf8'), url: urlOf(file) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async writeDashboard(target: DashboardTarget, body: string): Promise<DashboardRecord> {
      const file = join(options.dir, `${segment('dashboard', target.name)}.md`);
      await writeFileAtomic(file, body);
      return { id: urlOf(file), body, url: urlOf(file) };
    },
    // a rollout's health signal: a status a person set (`kdelta status set`), in `<dir>/statuses.json`
    async commitSignal(target, commit, signal) {
      return localSignal(await readLocalStatuses(options.dir, urlOf(options.dir)), target.repo, commit, signal.name);
    },
    async list() {
      const out: Proposal[] = [];
      let downstreams: string[];
      try {
        downstreams = (await readdir(options.dir, { withFileTypes: true }))
          .filter((e) => e.isDirectory())
          .map((e) => e.name)
          .sort();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      const files: string[] = [];
      for (const d of downstreams) {
        for (const f of (await readdir(join(options.dir, d))).filter((f) => f.endsWith('.md')).sort()) files.push(join(options.dir, d, f));
      }
      // read a batch at a time, in order: one record after another waits on the disk each time,
      // all at once could run out of file descriptors in a large fleet
      for (let i = 0; i < files.length; i += LIST_BATCH) {
        for (const p of await Promise.all(files.slice(i, i + LIST_BATCH).map(read))) if (p) out.push(p);
      }
      return out;
    },
  };
}
