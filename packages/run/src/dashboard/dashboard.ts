import { createHash } from 'node:crypto';
import { hiddenJson, inert, shortName, webLink } from '../markdown.js';
import type { JobAction, VariantResult } from '../report/result.js';
import { groupFailures } from '../report/failure-groups.js';
import { NO_HAND, type RolloutHand } from '../policy/rollout.js';
import {
  handAfterTicks,
  handOfData,
  heldOverHalts,
  keptHand,
  parseAdvanceSubject,
  ROLLOUT_BOXES_HOW,
  rolloutBoxes,
  ROLLOUT_TICK_KINDS,
  type RolloutTickKind,
} from './rollout-boxes.js';
import { readRolloutReports, type RolloutReport } from '../report/rollouts.js';
import { rolloutLines } from './rollout-lines.js';
import { readScanMemory, SCAN_ENTRY_CHARS, scanMemoryData, type RemovalScanMemory } from '../plan/scan-memory.js';

/**
 * The fleet dashboard: one Markdown text listing every variant of a run by its state, problems
 * first, with checkboxes a person ticks for the next run. The only writer and reader of that
 * text (what a run does with it is dashboard-run.ts). Everything from a downstream, a package or
 * an error message is untrusted: it appears only as inline code or inside the hidden data block.
 */

export type DashboardState =
  | 'failed'
  | 'removal-held'
  | 'render-failed'
  | 'conflicts'
  | 'blocked'
  | 'declined'
  | 'deferred'
  | 'held'
  | 'open'
  | 'not-adopted'
  | 'up-to-date';

/** The sections in their order, problems first. */
const SECTIONS: readonly { readonly state: DashboardState; readonly title: string; readonly problem: boolean }[] = [
  { state: 'failed', title: 'Failed', problem: true },
  { state: 'removal-held', title: 'Removals held by the removal guard', problem: true },
  { state: 'render-failed', title: 'Render failed', problem: true },
  { state: 'conflicts', title: 'Conflicts to review', problem: true },
  { state: 'blocked', title: 'Blocked (commits kdelta did not make, or the `kdelta:stop` label)', problem: true },
  { state: 'declined', title: 'Declined', problem: true },
  { state: 'deferred', title: "Deferred: the run's write budget was spent", problem: true },
  { state: 'held', title: 'Held by a gate (a schedule window, a freeze, a rollout wave): a later run proposes it', problem: false },
  { state: 'open', title: 'Open proposals', problem: false },
  { state: 'not-adopted', title: 'Not adopted (the package belongs to no variant)', problem: false },
  { state: 'up-to-date', title: 'Up to date', problem: false },
];

/** A conflicting field of a proposal. */
export interface DashboardField {
  readonly resource: string;
  readonly path: string;
}

/** One variant (package update, removal) of the run, as the dashboard shows it. */
export interface DashboardEntry {
  /** `<variant> <downstream>`: what a tick names. */
  readonly key: string;
  readonly variant: string;
  readonly downstream: string;
  readonly state: DashboardState;
  readonly proposalUrl?: string | undefined;
  readonly conflictCount: number;
  /** The conflicting fields known (a fast no-op does not recompute them: the last dashboard's are kept). */
  readonly fields: readonly DashboardField[];
  readonly fingerprint?: string | undefined;
  /** Why, in one line: the error of a failure, what blocks it, the render's error. */
  readonly detail?: string | undefined;
  readonly code?: string | undefined;
  /** The gate that held it (state `held`). */
  readonly heldBy?: string | undefined;
}

/** What a person ticked: job keys to retry, removal sets to allow, declined proposals (their URL) to propose again. */
export interface DashboardTicks {
  readonly retry: ReadonlySet<string>;
  readonly allowRemovals: ReadonlySet<string>;
  readonly repropose: ReadonlySet<string>;
  /**
   * The rollouts halted or advanced by hand on this dashboard: what it kept from earlier runs
   * (a box-halt lasts until resumed), with this run's ticks (halt, resume, advance).
   */
  readonly rollouts: RolloutHand;
}

export const NO_TICKS: DashboardTicks = { retry: new Set(), allowRemovals: new Set(), repropose: new Set(), rollouts: NO_HAND };

/** The conflicting fields a dashboard remembers per job key, with the fingerprint they belong to. */
export type FieldMemory = ReadonlyMap<string, { readonly fingerprint: string; readonly fields: readonly DashboardField[] }>;

/** What a dashboard's text holds for the next run. */
export interface ParsedDashboard {
  readonly ticks: DashboardTicks;
  readonly memory: FieldMemory;
  /** The rollouts the run that wrote it reported (`kdelta proposals` shows them); only what is of the form. */
  readonly rollouts: readonly RolloutReport[];
  /** The removal scans' "none here" answers the run that wrote it knew (plan/removal-scan.ts). */
  readonly scans?: RemovalScanMemory | undefined;
}

/** The fields a dashboard lists per proposal (the proposal has them all). */
export const MAX_FIELDS = 10;
/** GitHub refuses issue bodies over 65536 characters: the dashboard degrades to stay under this. */
export const MAX_DASHBOARD = 60_000;
const DETAIL_CHARS = 240;

export function jobKey(variant: string, downstream: string): string {
  return `${variant} ${downstream}`;
}

/** The key a tick of "allow these removals" carries: that set of removals, and no other, is allowed. */
export function removalSetKey(keys: readonly string[]): string {
  return createHash('sha256')
    .update([...keys].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
}

export function dashboardState(r: Pick<VariantResult, 'action' | 'code' | 'renderFailure' | 'conflictCount' | 'heldBy'>): DashboardState {
  const action: JobAction = r.action;
  switch (action) {
    case 'failed':
      return r.code === 'removals-held' ? 'removal-held' : 'failed';
    // a gate's hold is the fleet's plan, the budget's is not
    case 'deferred':
      return r.heldBy !== undefined ? 'held' : 'deferred';
    case 'declined':
      return 'declined';
    case 'blocked':
      return 'blocked';
    case 'not-adopted':
      return 'not-adopted';
    // the proposal was closed (no longer needed) or merged: the downstream has it
    case 'up-to-date':
    case 'closed':
      return 'up-to-date';
    case 'proposed':
    case 'updated':
    case 'unchanged':
    case 'removal-proposed':
    case 'orphan-proposed':
      return r.renderFailure ? 'render-failed' : r.conflictCount > 0 ? 'conflicts' : 'open';
    default:
      return action satisfies never;
  }
}

function oneLine(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const line = text.split('\n')[0]!.trim();
  return line.length > DETAIL_CHARS ? `${line.slice(0, DETAIL_CHARS - 1)}…` : line;
}

function detailOf(r: VariantResult, state: DashboardState): string | undefined {
  switch (state) {
    case 'failed':
      return oneLine(r.error);
    case 'render-failed':
      return oneLine(r.renderFailure?.message);
    case 'blocked':
    case 'not-adopted':
    case 'held':
      return oneLine(r.message);
    // the section says it all; a declined proposal's message is its link
    case 'removal-held':
    case 'conflicts':
    case 'declined':
    case 'deferred':
    case 'open':
    case 'up-to-date':
      return undefined;
    default:
      return state satisfies never;
  }
}

/** The run's results as dashboard entries; `memory` gives the fields of a proposal whose conflicts a fast no-op did not recompute. */
export function dashboardEntries(results: readonly VariantResult[], memory: FieldMemory = new Map()): DashboardEntry[] {
  return results.map((r) => {
    const key = jobKey(r.variant, r.downstream);
    const state = dashboardState(r);
    const remembered = memory.get(key);
    const fields =
      r.conflicts.length > 0
        ? r.conflicts.slice(0, MAX_FIELDS).map((c) => ({ resource: c.resource, path: c.path }))
        : r.conflictCount > 0 && remembered && r.fingerprint !== undefined && remembered.fingerprint === r.fingerprint
          ? remembered.fields.slice(0, MAX_FIELDS)
          : [];
    return {
      key,
      variant: r.variant,
      downstream: r.downstream,
      state,
      proposalUrl: r.proposal?.url,
      conflictCount: state === 'conflicts' || state === 'render-failed' ? r.conflictCount : 0,
      fields: state === 'conflicts' || state === 'render-failed' ? fields : [],
      fingerprint: r.fingerprint,
      detail: detailOf(r, state),
      code: state === 'failed' ? r.code : undefined,
      heldBy: state === 'held' ? r.heldBy : undefined,
    };
  });
}

type TickKind = 'retry' | 'allow-removals' | 'repropose' | RolloutTickKind;

/** A checkbox item: the hidden marker names what it acts on (percent-encoded: no `-->` can appear). */
function checkbox(kind: TickKind, subject: string, text: string): string {
  return `- [ ] <!-- kdelta-${kind}:${encodeURIComponent(subject)} --> ${text}`;
}

export const TICK =
  /^[ \t]*[-*+] \[([ xX])\] <!-- kdelta-(retry|allow-removals|repropose|advance-rollout|halt-rollout|resume-rollout):([A-Za-z0-9%._~!*'()-]+) -->/;
/** The data block is the text's last line, and read only there. */
const DATA = /(?:^|\n)<!-- kdelta-dashboard-data: (\{[^\n]*\}) -->[ \t\r\n]*$/;

/** Untrusted text (names, paths, error messages) as inline code, long names shortened. */
function code(text: string): string {
  return inert(shortName(text), 'code');
}

/** A proposal's link: a web address as a link, anything else (a record's path) as code. */
function link(url: string | undefined): string {
  if (url === undefined) return '';
  return ` · ${webLink('proposal', url) ?? code(url)}`;
}

function who(e: DashboardEntry): string {
  return `${code(e.variant)} → ${code(e.downstream)}`;
}

interface Detail {
  /** Entries listed per section (the rest counted). */
  readonly items: number;
  readonly fields: number;
  /** Open and up-to-date variants listed, or only counted. */
  readonly listOpen: boolean;
  readonly listUpToDate: boolean;
}

/** Why an entry is in its section (its code and message), as the item shows it; '' when none. */
function whyOf(e: DashboardEntry): string {
  return e.detail ? `${e.code ? `${code(e.code)} ` : ''}${code(e.detail)}` : '';
}

/** `said`: the entry's message is already shown above it (a message several entries share), so the item leaves it out. */
function item(e: DashboardEntry, d: Detail, said = false): string {
  const why = e.detail && !said ? `: ${whyOf(e)}` : '';
  switch (e.state) {
    case 'failed':
      return checkbox('retry', e.key, `retry ${who(e)}${link(e.proposalUrl)}${why}`);
    case 'declined':
      return e.proposalUrl !== undefined
        ? checkbox('repropose', e.proposalUrl, `re-propose ${who(e)}${link(e.proposalUrl)}`)
        : `- ${who(e)}`;
    case 'conflicts':
    case 'render-failed': {
      const fields = e.fields.slice(0, d.fields).map((f) => `${code(f.path)} (${code(f.resource)})`);
      const more = e.conflictCount - fields.length;
      const conflicts =
        e.conflictCount === 0
          ? ''
          : `: ${e.conflictCount} conflict(s)${fields.length > 0 ? `: ${fields.join(', ')}${more > 0 ? `, …and ${more} more` : ''}` : ''}`;
      return `- ${who(e)}${link(e.proposalUrl)}${e.state === 'render-failed' ? why : ''}${conflicts}`;
    }
    // which gate, and its reason (which says when a later run looks again)
    case 'held':
      return `- ${who(e)}${link(e.proposalUrl)}${e.heldBy !== undefined ? `, held by ${code(e.heldBy)}` : ''}${why}`;
    case 'removal-held':
    case 'blocked':
    case 'deferred':
    case 'open':
    case 'not-adopted':
    case 'up-to-date':
      return `- ${who(e)}${link(e.proposalUrl)}${why}`;
    default:
      return e.state satisfies never;
  }
}

function section(state: DashboardState, title: string, entries: readonly DashboardEntry[], d: Detail): string[] {
  if (entries.length === 0) return [];
  const lines = [`### ${title} (${entries.length})`, ''];
  const listed = (state === 'open' && !d.listOpen) || (state === 'up-to-date' && !d.listUpToDate) ? [] : entries.slice(0, d.items);
  if (state === 'removal-held') {
    lines.push(
      `More removals are due than the run may propose (max-removals): none was proposed. If the control resources are wrong, fix them; if these variants were removed on purpose, tick the box.`,
      '',
      checkbox('allow-removals', removalSetKey(entries.map((e) => e.key)), `allow these ${entries.length} removals on the next run`),
    );
    for (const e of listed) lines.push(`  ${item(e, d)}`);
  } else if (state === 'up-to-date' && listed.length > 0) {
    lines.push(`<details><summary>${entries.length} variant(s)</summary>`, '', ...listed.map((e) => item(e, d)), '', '</details>');
  } else if (state === 'failed' || state === 'render-failed') lines.push(...sharedFirst(listed, d));
  else lines.push(...listed.map((e) => item(e, d)));
  if (listed.length < entries.length && listed.length > 0)
    lines.push(`- …and ${entries.length - listed.length} more (see the run's report)`);
  lines.push('');
  return lines;
}

/**
 * The items of a section of failures, a message several entries share shown once: one line with
 * the message and how many it affects, the entries (each keeping its own box) under it.
 */
function sharedFirst(entries: readonly DashboardEntry[], d: Detail): string[] {
  const { groups, groupOf } = groupFailures(entries.filter((e) => e.detail).map((e) => ({ message: whyOf(e), member: e.key })));
  const lines: string[] = [];
  for (const g of groups) {
    lines.push(`- ${g.members.length} variant(s): ${g.message}`);
    for (const e of entries) if (e.detail && groupOf(whyOf(e)) === g) lines.push(`  ${item(e, d, true)}`);
  }
  for (const e of entries) if (!e.detail || groupOf(whyOf(e)) === undefined) lines.push(item(e, d));
  return lines;
}

export interface DashboardText {
  readonly title: string;
  /** The hidden marker that finds the dashboard again. */
  readonly marker: string;
  readonly entries: readonly DashboardEntry[];
  /** How a person ticks a box where the dashboard lives (a file: edit `- [ ]` to `- [x]`). */
  readonly tickHow?: string | undefined;
  /** The fleet's rollouts (update policies with waves), shown before the variants, each with its advance and halt boxes. */
  readonly rollouts?: readonly RolloutReport[] | undefined;
  /** The rollouts halted or advanced by hand on this dashboard, kept for the next run. */
  readonly hand?: RolloutHand | undefined;
  /** The removal scans' "none here" answers, kept for the next run as far as they fit. */
  readonly scans?: RemovalScanMemory | undefined;
}

function rolloutSection(rollouts: readonly RolloutReport[], hand: RolloutHand): string[] {
  const heldOver = heldOverHalts(hand, rollouts, checkbox);
  if (rollouts.length === 0 && heldOver.length === 0) return [];
  return [
    `### Rollouts (${rollouts.length})`,
    '',
    ROLLOUT_BOXES_HOW,
    '',
    ...rollouts.flatMap((r) => [...rolloutLines(r), ...rolloutBoxes(r, hand, checkbox)]),
    ...heldOver,
    '',
  ];
}

/** `scans`: how many of the removal scans' answers the data block keeps. */
function renderWith(input: DashboardText, d: Detail, scans = 0): string {
  const by = new Map<DashboardState, DashboardEntry[]>();
  for (const e of input.entries) by.set(e.state, [...(by.get(e.state) ?? []), e]);
  const count = (problem: boolean) => SECTIONS.filter((s) => s.problem === problem).reduce((n, s) => n + (by.get(s.state)?.length ?? 0), 0);
  const problems = count(true);
  const lines = [
    `## ${input.title}`,
    '',
    `${input.entries.length} variant(s): ${problems} need attention, ${by.get('open')?.length ?? 0} open proposal(s), ${by.get('up-to-date')?.length ?? 0} up to date.`,
    '',
  ];
  if (problems > 0) {
    lines.push(
      `Tick a box and the next run acts on it: **retry** runs a failed variant first, before the other jobs take the write budget; **allow these removals** proposes the removals the removal guard held back (that set only); **re-propose** proposes a declined proposal again. A tick is read once: the run that acts on it clears the box.${input.tickHow ? ` ${input.tickHow}` : ''}`,
      '',
    );
  }
  const rollouts = input.rollouts ?? [];
  lines.push(...rolloutSection(rollouts, input.hand ?? NO_HAND));
  for (const s of SECTIONS) lines.push(...section(s.state, s.title, by.get(s.state) ?? [], d));
  // what the next run needs and a fast no-op does not recompute: the conflicting fields shown
  const memory: Record<string, { f: string; c: [string, string][] }> = {};
  for (const e of input.entries) {
    if (e.fields.length > 0 && e.fingerprint !== undefined && d.fields > 0)
      memory[e.key] = { f: e.fingerprint, c: e.fields.slice(0, d.fields).map((f) => [f.resource, f.path]) };
  }
  // a rollout halted or advanced here stays so until resumed or done (the boxes are read once)
  const hand = keptHand(input.hand ?? NO_HAND, input.rollouts ?? []);
  const kept = {
    ...(hand.halted.length > 0 || Object.keys(hand.advanced).length > 0 ? { hand } : {}),
    ...(input.scans && scans > 0 ? { scans: scanMemoryData(input.scans, scans) } : {}),
  };
  lines.push(
    '---',
    '_Kept by kdelta: each run rewrites it when something changed; edit the control resources, not this text._',
    input.marker,
    `<!-- kdelta-dashboard-data: ${hiddenJson({ fields: memory, ...(rollouts.length > 0 ? { rollouts } : {}), ...kept })} -->`,
    '',
  );
  return lines.join('\n');
}

/**
 * The dashboard's text, degraded until it fits `limit`: open and up-to-date lists counted only,
 * fewer fields, fewer items. The removal scans' answers take only the room left: those that do not
 * fit are not kept, and their downstreams are scanned again (a clone each), nothing else is lost.
 */
export function renderDashboard(input: DashboardText, limit: number = MAX_DASHBOARD): string {
  const all: Detail = { items: input.entries.length, fields: MAX_FIELDS, listOpen: true, listUpToDate: true };
  const ladder: Detail[] = [all, { ...all, listUpToDate: false }, { ...all, listUpToDate: false, listOpen: false }];
  for (let items = Math.floor(input.entries.length / 2); items >= 1; items = Math.floor(items / 2))
    ladder.push({ items, fields: items > 50 ? 3 : 0, listOpen: false, listUpToDate: false });
  let text = '';
  for (const d of ladder) {
    text = renderWith(input, d);
    if (text.length <= limit) return withScans(input, d, text, limit);
  }
  return text;
}

/** The text with as many of the removal scans' answers as fit in what `limit` leaves. */
function withScans(input: DashboardText, d: Detail, text: string, limit: number): string {
  const count = input.scans?.clear.size ?? 0;
  if (count === 0) return text;
  // `,"scans":{"k":"<context>","c":{}}`, then one entry per downstream
  const room = Math.floor((limit - text.length - 64) / SCAN_ENTRY_CHARS);
  if (room <= 0) return text;
  const fuller = renderWith(input, d, Math.min(count, room));
  return fuller.length <= limit ? fuller : text;
}

/** What a dashboard's text holds for the next run: the ticked boxes and the remembered fields. Anything else is ignored. */
export function parseDashboard(body: string): ParsedDashboard {
  const ticks: Record<TickKind, Set<string>> = {
    retry: new Set(),
    'allow-removals': new Set(),
    repropose: new Set(),
    ...(Object.fromEntries(ROLLOUT_TICK_KINDS.map((k) => [k, new Set<string>()])) as Record<RolloutTickKind, Set<string>>),
  };
  for (const line of body.split('\n')) {
    const m = TICK.exec(line);
    if (!m || m[1] === ' ') continue;
    try {
      ticks[m[2] as TickKind].add(decodeURIComponent(m[3]!));
    } catch {
      // a marker a person mangled: not a tick
    }
  }
  const memory = new Map<string, { fingerprint: string; fields: DashboardField[] }>();
  let rollouts: RolloutReport[] = [];
  let kept = NO_HAND;
  let scans: RemovalScanMemory | undefined;
  const data = DATA.exec(body);
  if (data) {
    try {
      const parsed = JSON.parse(data[1]!) as { fields?: unknown; rollouts?: unknown; hand?: unknown; scans?: unknown };
      rollouts = readRolloutReports(parsed.rollouts);
      scans = readScanMemory(parsed.scans);
      kept = handOfData(parsed.hand);
      const fields = parsed.fields;
      if (typeof fields === 'object' && fields !== null) {
        for (const [key, value] of Object.entries(fields as Record<string, unknown>)) {
          const v = value as { f?: unknown; c?: unknown };
          if (typeof v?.f !== 'string' || !Array.isArray(v.c)) continue;
          const list = v.c.filter(
            (x): x is [string, string] => Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && typeof x[1] === 'string',
          );
          memory.set(key, { fingerprint: v.f, fields: list.slice(0, MAX_FIELDS).map(([resource, path]) => ({ resource, path })) });
        }
      }
    } catch {
      // a data block a person edited: nothing remembered, the next fast no-op shows counts only
    }
  }
  const advance = new Map<string, string>();
  for (const subject of ticks['advance-rollout']) {
    const a = parseAdvanceSubject(subject);
    if (a) advance.set(a.key, a.wave);
  }
  const hand = handAfterTicks(kept, { advance, halt: ticks['halt-rollout'], resume: ticks['resume-rollout'] });
  return {
    ticks: { retry: ticks.retry, allowRemovals: ticks['allow-removals'], repropose: ticks.repropose, rollouts: hand },
    memory,
    rollouts,
    scans,
  };
}
