import { ForgeError } from '../errors.js';
import type { Forge, Proposal, ProposalInput, ProposalTarget, UpsertResult } from '../forge.js';
import { type GitHubClient, keyOf } from './client.js';
import type { Decorations } from './decorations.js';
import type { CloseMarks } from './options.js';
import { encodeBody, type FingerprintIn, MAX_BODY_CHARS, type PullCache, type PullJson, type PullRecord } from './pull-cache.js';
import { githubRepoOf } from './repo.js';

/**
 * Pull requests as proposals: find, open or update (by head branch, then create or update), close,
 * the last declined one, and every one the forge has seen. What a closed one's state is, the
 * run's protocol decides (the pull cache asks it); these only read and write.
 */

export type Pulls = Pick<Forge, 'find' | 'upsert' | 'close' | 'declined' | 'list'>;

/** Sends of the request that opens a pull request when GitHub answers 5xx (as Octokit's retry: three). */
const OPEN_SENDS = 3;

export function createPulls(
  client: GitHubClient,
  cache: PullCache,
  decorations: Decorations,
  options: {
    readonly fingerprintIn?: FingerprintIn | undefined;
    readonly closes?: CloseMarks | undefined;
    /** Heads list() shows (default `kdelta/`). */
    readonly branchPrefix?: string | undefined;
  },
): Pulls {
  const prefix = options.branchPrefix ?? 'kdelta/';
  const fingerprintIn = options.fingerprintIn;

  /** Open the pull request (as a draft when the run's readiness says so and the repository offers drafts). */
  async function openPull(input: ProposalInput, stored: string, warnings: string[]): Promise<PullJson> {
    const repo = client.repoOf(input.repo);
    const request = (draft: boolean) =>
      client.request('POST /repos/{owner}/{repo}/pulls', {
        ...repo,
        title: input.title,
        head: input.head,
        base: input.base,
        body: stored,
        draft,
        // a 5xx is not sent again blindly: GitHub may have opened it (openOrFind looks first)
        request: { retries: 0 },
      });
    const draft = decorations.wantsDraft(input);
    const pull = await request(draft).catch((error: unknown) => {
      if (!draft || !decorations.draftsUnsupported(error)) throw error;
      warnings.push(decorations.draftsMissing(repo, `the pull request for ${input.head} is opened ready for review`));
      return request(false);
    });
    return pull.data as PullJson;
  }

  /**
   * The open pull request for the input, opened when there is none; `created` when this call opened
   * it. A 5xx to the request that opens it may come after GitHub opened it (a proxy lost the
   * answer): the open pull requests are read again before it is sent again, and one carrying
   * exactly the body just sent is this call's (so it is reported created and gets its status now).
   */
  async function openOrFind(input: ProposalInput, stored: string, warnings: string[]): Promise<{ r: PullRecord; created: boolean }> {
    const found = await cache.findRecord(input);
    if (found) return { r: found, created: false };
    const repo = client.repoOf(input.repo);
    for (let send = 1; ; send++) {
      try {
        const r = { pull: await openPull(input, stored, warnings), downstream: input.downstream, repoUrl: input.repo };
        (await cache.openPulls(input)).set(r.pull.number, r);
        return { r, created: true };
      } catch (error) {
        const status = (error as { status?: number }).status ?? 0;
        const text = JSON.stringify((error as { response?: { data?: unknown } }).response?.data ?? '');
        const lost = status >= 500 && send < OPEN_SENDS;
        const exists = status === 422 && /already exists/i.test(text);
        if (!lost && !exists) throw client.failure(error, `open the pull request for ${input.head} in ${keyOf(repo)}`, repo.owner);
        // Opened since the list was read (another run), or by this call's own send: read it again.
        cache.forget(repo);
        const r = await cache.findRecord(input);
        if (r) return { r, created: (lost || send > 1) && r.pull.body === stored };
        if (exists)
          throw new ForgeError(
            'github-request-failed',
            `GitHub: a pull request for ${input.head} into ${input.base} exists in ${keyOf(repo)} but cannot be found`,
          );
        // not opened: sent again
      }
    }
  }

  /** Title and body as the input says; true when GitHub was asked to change them. */
  async function edit(r: PullRecord, input: ProposalInput, stored: string): Promise<boolean> {
    const patch: Record<string, string> = {};
    if (r.pull.title !== input.title) patch.title = input.title;
    if ((r.pull.body ?? '') !== stored) patch.body = stored;
    if (Object.keys(patch).length === 0) return false;
    const repo = client.repoOf(input.repo);
    const data = await client.call<PullJson>(
      `update pull request #${r.pull.number} of ${keyOf(repo)}`,
      'PATCH /repos/{owner}/{repo}/pulls/{pull_number}',
      { ...repo, pull_number: r.pull.number, ...patch },
    );
    r.pull = { ...r.pull, ...data, labels: data.labels ?? r.pull.labels };
    return true;
  }

  return {
    async find(target) {
      const r = await cache.findRecord(target);
      return r ? cache.toProposal(r) : undefined;
    },

    async upsert(input: ProposalInput): Promise<UpsertResult> {
      const repo = client.repoOf(input.repo);
      const stored = encodeBody(input.body, input.fingerprint, fingerprintIn);
      if (stored.length > MAX_BODY_CHARS) {
        throw new ForgeError(
          'body-too-long',
          `the body of ${input.head} has ${stored.length} characters, over GitHub's limit of ${MAX_BODY_CHARS}`,
        );
      }
      const warnings: string[] = [];
      const { r, created } = await openOrFind(input, stored, warnings);
      if (input.headCommit) cache.pushed.set(`${keyOf(repo)}#${r.pull.number}`, input.headCommit);
      let changed = created || (await edit(r, input, stored));
      if (changed) {
        try {
          await decorations.decorate(r, input, created, warnings);
        } catch (error) {
          // The pull request is open (or updated): what did not follow is a warning, not a failure.
          warnings.push((error as Error).message);
        }
      }
      // Auto-merge on where the run holds it back (whoever turned it on) is turned off, or the
      // upsert fails: not a warning, as a pull request that merges unreviewed cannot be taken back.
      if (await decorations.holdAutoMerge(r, input)) changed = true;
      return { proposal: cache.toProposal(r), created, changed, ...(warnings.length > 0 ? { warnings } : {}) };
    },

    async close(proposal, state = 'closed') {
      const repo = client.repoOf(proposal.repo);
      const n = Number(proposal.id);
      // kdelta's own close says so in the same request, so that a close without it is a person's
      const marked =
        options.closes && state !== 'declined'
          ? { body: encodeBody(options.closes.mark(proposal.body, state), proposal.fingerprint, fingerprintIn) }
          : {};
      const data = await client.call<PullJson>(
        `close pull request #${n} of ${keyOf(repo)}`,
        'PATCH /repos/{owner}/{repo}/pulls/{pull_number}',
        { ...repo, pull_number: n, state: 'closed', ...marked },
      );
      (await cache.openPulls(proposal)).delete(n);
      if (state === 'merged') cache.mergedByRun.add(`${keyOf(repo)}#${n}`);
      return cache.toProposal({ pull: data, downstream: proposal.downstream, repoUrl: proposal.repo }, data.merged_at ? 'merged' : state);
    },

    ...(options.closes
      ? {
          async declined(target: ProposalTarget) {
            if (await cache.findRecord(target)) return undefined;
            const last = await cache.lastClosed(target, client.repoOf(target.repo));
            if (!last) return undefined;
            const p = cache.toProposal({ pull: last, downstream: target.downstream, repoUrl: target.repo });
            return p.state === 'declined' ? p : undefined;
          },
        }
      : {}),

    async list(repositories = []) {
      for (const r of repositories) {
        const m = githubRepoOf(r.repo, client.serverUrl);
        if (m.ok) cache.remember(r, m.value);
      }
      const out: Proposal[] = [];
      for (const { downstream, repoUrl, repo } of cache.seen.values()) {
        const latest = new Map<string, PullJson>();
        for (const p of await cache.pages(repo, 'all')) {
          if (!p.head.ref.startsWith(prefix) || !cache.sameRepo(p, repo)) continue;
          const key = `${p.head.ref}\0${p.base.ref}`;
          const before = latest.get(key);
          if (!before || before.number < p.number) latest.set(key, p);
        }
        for (const p of latest.values()) out.push(cache.toProposal({ pull: p, downstream, repoUrl }));
      }
      return out;
    },
  };
}
