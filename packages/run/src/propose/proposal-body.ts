import { createHash } from 'node:crypto';
import { FieldPath, type Conflict, type ResourceReport } from '@kdelta/merge-core';
import { inert, shortName } from '../markdown.js';
import { parseMetadataBlock, renderMetadataBlock, type ProposalMetadata } from './proposal-metadata.js';
import type { RenderFailureReport } from '../jobs/render.js';
import { conflictViews, MAX_VALUE, renderPieces } from './value-diff.js';
import { upstreamSection } from './upstream-section.js';
import type { UpstreamChanges } from '../jobs/upstream-changes.js';

/**
 * The proposal body: one text for every forge, ending with the hidden metadata block that makes
 * re-runs cheap. The only writer and the only reader of that block.
 */

export function renderFailureSection(f: RenderFailureReport): string[] {
  const lines = [
    '### Render failed',
    '',
    "The package's Kptfile pipeline failed after the update and the variant's mutations, so this proposal holds the package **unrendered**: what the pipeline sets (package context, injected values, labels...) has not reached the resources. Fix the pipeline or the function; the next run renders again and replaces this section.",
    '',
  ];
  if (f.function) lines.push(`- function: ${code(f.function)}`);
  lines.push(`- in: ${code(f.kptfile)}${f.field ? ` ${code(f.field)}` : ''}`, `- error: ${code(f.message)}`);
  if (f.results.length > 0) {
    lines.push('- results:');
    for (const r of f.results) lines.push(`  - ${code(r)}`);
  }
  lines.push('');
  return lines;
}

/** An inline code span's text as written by {@link code} (its fence, padding and zero-width breaks removed). */
function codeText(span: string): string {
  const m = /^(`+)( ?)([\s\S]*?)\2\1$/.exec(span.trim());
  return (m ? m[3]! : span).replace(/\u200b/g, '');
}

/**
 * What a body's "Render failed" section says (its function and error), for a listing of the
 * proposals; undefined when it has none. Read for display only: it decides nothing.
 */
export function renderFailureOfBody(body: string): { readonly function?: string | undefined; readonly error: string } | undefined {
  const at = body.search(/^### Render failed\r?$/m);
  if (at < 0) return undefined;
  const section = body.slice(at).split(/\r?\n(?=### )/)[0]!;
  const field = (name: string) => new RegExp(`^- ${name}: (.*)$`, 'm').exec(section)?.[1];
  const error = field('error');
  if (error === undefined) return undefined;
  const fn = field('function');
  return { ...(fn !== undefined ? { function: codeText(fn) } : {}), error: codeText(error) };
}

export function notReadySection(gates: readonly { readonly type: string; readonly message?: string | undefined }[]): string[] {
  return [
    '### Not ready',
    '',
    "A readiness gate of the package is not met: the package is proposed as Porch creates it, with the gate's `False` condition in its Kptfile, and is not ready to publish until the gate is met. Add the missing source to the control resources; the next run injects it and replaces this section.",
    '',
    ...gates.map((g) => `- ${code(g.type)}${g.message ? `: ${inert(g.message)}` : ''}`),
    '',
  ];
}

/**
 * The metadata block is the body's last line, and read only there: anything before it (package
 * text, which the escaping keeps from holding an opener anyway) can never stand in for it.
 * Trailing blank space is allowed (GitHub's web page hands back CRLF line ends).
 */
/** A commit kdelta did not make, kept on the branch under kdelta's update (carried forward). */
export interface CarriedCommit {
  readonly sha: string;
  /** Its author's name. */
  readonly name: string;
  /** The first line of its message. */
  readonly subject: string;
}

/** How many carried commits a body lists (a branch with more says how many more). */
const CARRIED_LINES = 20;

function carriedSection(carried: readonly CarriedCommit[]): string[] {
  return [
    '### Carried forward',
    '',
    `This branch has ${carried.length} commit(s) kdelta did not make. They stay as they are: this update is built from the base branch (its conflicts are the downstream's own), then applied on top of them as a new commit, a 3-way merge whose origin is kdelta's last commit on the branch. Where they and this update changed the same field, the clashes table says so.`,
    '',
    // names and subjects are strangers' text
    ...carried
      .slice(0, CARRIED_LINES)
      .map((c) => `- ${code(c.sha.slice(0, 12))} by ${inert(shortName(c.name))}: ${code(shortName(c.subject))}`),
    ...(carried.length > CARRIED_LINES ? [`- …and ${carried.length - CARRIED_LINES} more`] : []),
    '',
  ];
}

export interface FileChange {
  readonly status: 'added' | 'modified' | 'deleted';
  /** Path relative to the downstream repository. */
  readonly path: string;
}

export interface ProposalBodyInput {
  readonly title: string;
  readonly summary: string;
  readonly downstream: { readonly repo: string; readonly branch: string; readonly directory: string };
  readonly changes: readonly FileChange[];
  readonly resources: readonly ResourceReport[];
  readonly conflicts: readonly Conflict[];
  readonly metadata: ProposalMetadata;
  /** The upstream's compare page between the old and the new commit (a forge on the same server gives it). */
  readonly compareUrl?: string | undefined;
  /** What upstream changed since the package's lock: a section of its own, whole until the body is too long. */
  readonly upstreamChanges?: UpstreamChanges | undefined;
  /** The render failed: a section says so, always kept whole (it is short). */
  readonly renderFailure?: RenderFailureReport | undefined;
  /** The commits of others the branch carries forward: a section names them, always kept whole. */
  readonly carried?: readonly CarriedCommit[] | undefined;
  /**
   * Where a carried commit changed a field this update changes too (origin: kdelta's last commit;
   * upstream: this update; local: the branch): a section of their own, apart from the conflicts.
   */
  readonly clashes?: readonly Conflict[] | undefined;
  /** Readiness gates of the package not met (seed 004): a section says so, always kept whole. */
  readonly notReady?: readonly { readonly type: string; readonly message?: string | undefined }[] | undefined;
  /** Conflicts a person decided on this proposal (not in `conflicts`), and ticks that could not be applied. */
  readonly decisions?: Decisions | undefined;
}

/**
 * What a person can decide on a conflict by ticking its box: keep local's value where upstream's
 * was taken (the field is then pinned with `# kdelta:local`), or take upstream's where local's was
 * kept. A box is matched by its `id` only (the label is for people, and shortens long values).
 */
export interface ConflictChoice {
  readonly take: 'local' | 'upstream';
  /** Names the resource, the field, the side taken and both full values: a value that changed since is another box. */
  readonly id: string;
  readonly label: string;
}

/** A conflict decided on this proposal: the package holds the value the person chose. */
export interface DecidedConflict {
  readonly conflict: Conflict;
  readonly choice: ConflictChoice;
}

/** A ticked box the run did not apply, and why. */
export interface IgnoredTick {
  /** The box's text as the body holds it: a person's edit is possible, so it is shown escaped. */
  readonly label: string;
  readonly reason: string;
}

export interface Decisions {
  readonly decided: readonly DecidedConflict[];
  readonly ignored: readonly IgnoredTick[];
}

/** The id of a conflict's box: a hash of the resource, the field, the side taken and both full values. */
export function choiceId(c: Conflict, take: 'local' | 'upstream'): string {
  const identity = [c.resource, c.path, take, c.values.local ?? null, c.values.upstream ?? null];
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
}

/**
 * The choice a conflict offers, if any: the other side's value must be there (a field to set,
 * never one to delete) and the path must end at a field of a map (where a pin can be written).
 */
export function conflictChoice(c: Conflict): ConflictChoice | undefined {
  const take = c.winner === 'upstream' ? 'local' : 'upstream';
  const chosen = c.values[take];
  const last = FieldPath.parse(c.path)?.segments.at(-1);
  if (chosen === undefined || !last || !('field' in last)) return undefined;
  // long values: what each side changed, so two boxes (and two conflicts) never read the same
  const views = conflictViews(c.values);
  const other = take === 'local' ? 'upstream' : 'local';
  const what = views
    ? `${take}'s ${renderPieces(views[take], 'code')} over ${other}'s ${renderPieces(views[other], 'code')}`
    : `${take} ${value(chosen)}`;
  return {
    take,
    id: choiceId(c, take),
    label: `${take === 'local' ? 'keep' : 'take'} ${what} for ${code(shortName(c.path))} (${inert(shortName(c.resource))})`,
  };
}

/** A ticked box: its id, and its text for a message. */
export interface Tick {
  readonly id: string;
  readonly text: string;
}

export const DECIDE = '#### Decide';
/** A box kdelta wrote: the bullet, the box, the hidden id. Matched against one line of the body at a time. */
export const BOX = /^[ \t]*[-*+][ \t]+\[([ xX])\][ \t]+<!-- kdelta-decide:([0-9a-f]{16}) -->[ \t]*([\s\S]*)$/;

function decideBox(c: ConflictChoice): string {
  return `- [ ] <!-- kdelta-decide:${c.id} --> ${c.label}`;
}

/**
 * The ticked boxes of a proposal's body: only kdelta's boxes (by their hidden id), only in its
 * Decide section. Lines end at `\n` alone (a CR before it is GitHub's CRLF): a CR, U+2028 or
 * U+2029 in a label starts no line of its own.
 */
export function tickedChoices(body: string): Tick[] {
  const lines = body.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const start = lines.lastIndexOf(DECIDE);
  if (start < 0) return [];
  const ticks: Tick[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#') || line === '---') break;
    const m = BOX.exec(line);
    if (m && m[1] !== ' ') ticks.push({ id: m[2]!, text: m[3]!.trimEnd() });
  }
  return ticks;
}

/** Ticks in the open body that no run has applied yet: any makes the proposal due for a rebuild. */
export function pendingTicks(body: string): Tick[] {
  const decided = new Set(parseMetadataBlock(body)?.decided ?? []);
  return tickedChoices(body).filter((t) => !decided.has(t.id));
}

function decideSection(conflicts: readonly Conflict[], decisions: Decisions | undefined): string[] {
  const choices = conflicts.flatMap((c) => conflictChoice(c) ?? []);
  const decided = decisions?.decided ?? [];
  const ignored = decisions?.ignored ?? [];
  const lines: string[] = [];
  if (choices.length > 0 || decided.length > 0) {
    lines.push(
      DECIDE,
      '',
      choices.length > 0
        ? "Tick a box to put the other value in this proposal; the next run rebuilds it so, and nothing happens before. Keeping local's value pins the field with `# kdelta:local` in the package, so this update and every later one keep it; taking upstream's sets the field to upstream's value, so later updates follow upstream. (On the local forge, change `- [ ]` to `- [x]` in this record.)"
        : 'The package in this proposal holds the values decided here.',
      '',
      ...choices.map(decideBox),
      ...decided.map(
        (d) => `- ${d.choice.label}: decided on this proposal${d.choice.take === 'local' ? ' (pinned with `# kdelta:local`)' : ''}`,
      ),
      '',
    );
  }
  if (ignored.length > 0) lines.push('#### Ticks not applied', '', ...ignored.map((t) => `- ${inert(t.label)}: ${t.reason}`), '');
  return lines;
}

/** GitHub refuses bodies over 65536 characters; the body degrades to stay under it (with room for the forge's own marker). */
export const MAX_BODY = 60_000;

export const SHORTENED_NOTE =
  "> This description was shortened to fit the forge's size limit: the run's report (the Action's job summary, or `kdelta run --report`) has the full text.";

function code(text: string): string {
  return inert(text, 'code');
}

/**
 * A value as people read it, whole; a long one is cut (a conflict's long values are shown by
 * their differences, see {@link conflictViews}; a box is matched by its id, never by this text).
 */
function value(v: unknown, context: 'code' | 'cell' = 'code'): string {
  if (v === undefined) return '(absent)';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return inert(s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 3)}...` : s, context);
}

/**
 * The resource table's rows, agreeing with the list of changed files: the merge's report for the
 * resources of the files this proposal changes, and a row for each changed file the merge did not
 * touch (the variant's mutations or the render changed it). A resource of a file the proposal does
 * not change is said unchanged (kept local ones stay in view), never changed.
 */
function resourceRows(input: ProposalBodyInput): { resource: string; file: string; what: string }[] {
  if (input.resources.length === 0) return [];
  const dir = input.downstream.directory;
  const inPackage = (path: string) => (dir && path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : path);
  // only the package's files have resources to show (the file list names every other one)
  const changed = new Map(input.changes.filter((c) => !dir || c.path.startsWith(`${dir}/`)).map((c) => [inPackage(c.path), c.status]));
  const rows = input.resources
    // a file the merge changed that the proposal does not (the render undid it): nothing to show
    .filter((r) => (r.changed || r.action !== 'merged') && (changed.has(r.file) || !r.changed))
    .map((r) => ({
      resource: r.resource,
      file: r.file,
      what: !changed.has(r.file)
        ? `${r.action} (unchanged)`
        : r.changed
          ? r.action
          : `${r.action} by the merge, then changed by the variant or the render`,
    }));
  const reported = new Set(rows.map((r) => r.file));
  for (const [file, status] of changed) {
    if (reported.has(file)) continue;
    // the Kptfile is kdelta's record of the update: its upstream lock and annotations
    if (file === 'Kptfile') rows.push({ resource: 'Kptfile', file, what: `${status}: upstream lock and annotations` });
    else rows.push({ resource: '(the file)', file, what: `${status} by the variant or the render` });
  }
  return rows;
}

/** How much detail a body keeps: every step of the ladder drops some (see {@link renderProposalBodies}). */
interface Detail {
  readonly conflictRows: number;
  readonly resourceTable: boolean;
  readonly upstreamDetail: boolean;
  readonly fileLines: number;
  readonly conflictSection: boolean;
  readonly changeSection: boolean;
}

function renderWith(input: ProposalBodyInput, d: Detail, shortened: boolean): string {
  const { metadata: meta } = input;
  const head: string[] = [`## ${inert(input.title)}`, '', input.summary, ''];
  if (shortened) head.push(SHORTENED_NOTE, '');
  if (input.renderFailure) head.push(...renderFailureSection(input.renderFailure));
  if (input.notReady && input.notReady.length > 0) head.push(...notReadySection(input.notReady));
  if (input.carried && input.carried.length > 0) head.push(...carriedSection(input.carried));
  const provenance: string[] = ['### Provenance', ''];
  if (meta.upstream) {
    provenance.push(
      `- upstream: ${code(meta.upstream.repo)} at ${code(meta.upstream.ref)}${meta.upstream.reason ? ` (${inert(meta.upstream.reason)})` : ''}`,
      `- commit: ${meta.upstream.oldCommit && meta.upstream.oldCommit !== meta.upstream.commit ? `${code(meta.upstream.oldCommit.slice(0, 12))} → ` : ''}${code(meta.upstream.commit.slice(0, 12))}`,
    );
    if (input.compareUrl) provenance.push(`- upstream changes: [compare](${input.compareUrl})`);
  }
  provenance.push(
    `- downstream: ${code(input.downstream.repo)} ${code(input.downstream.directory || '/')} into ${code(input.downstream.branch)}`,
    `- variant: ${code(meta.variant)}, kdelta ${meta.version}`,
    '',
  );
  const footer = [
    '---',
    '_Written by kdelta; edit the control resources, not this text: a re-run replaces it._',
    renderMetadataBlock(meta),
    '',
  ];

  const changes: string[] = [];
  if (d.changeSection) {
    changes.push('### What changed', '');
    if (input.changes.length === 0) changes.push('Nothing in the package files.');
    for (const c of input.changes.slice(0, d.fileLines)) changes.push(`- ${c.status} ${code(shortName(c.path))}`);
    if (input.changes.length > d.fileLines) changes.push(`- …and ${input.changes.length - d.fileLines} more file(s)`);
    const rows = resourceRows(input);
    if (d.resourceTable && rows.length > 0) {
      changes.push('', '| resource | file | what happened |', '| --- | --- | --- |');
      for (const r of rows) changes.push(`| ${inert(shortName(r.resource))} | ${inert(shortName(r.file))} | ${r.what} |`);
    }
    changes.push('');
  } else {
    changes.push('### What changed', '', `${input.changes.length} file(s); the list is in the run's report.`, '');
  }
  changes.push(...upstreamSection(input.upstreamChanges, d.upstreamDetail));

  const conflicts: string[] = [];
  const decided = input.decisions?.decided ?? [];
  const total = input.conflicts.length + decided.length;
  const heading = conflictsHeading(input.conflicts.length, decided.length);
  if (total > 0 && (!d.conflictSection || (d.conflictRows === 0 && input.conflicts.length > 0))) {
    conflicts.push(heading, '', "The list is in the run's report.", '');
  } else if (total > 0) {
    const shown = input.conflicts.slice(0, d.conflictRows);
    conflicts.push(
      heading,
      '',
      'Upstream and the downstream both changed these fields; the rule says which value is in this proposal.',
      '',
      ...conflictTable(shown, decided),
    );
    if (input.conflicts.length > d.conflictRows)
      conflicts.push('', `…and ${input.conflicts.length - d.conflictRows} more (see the run's report).`);
    conflicts.push('', ...decideSection(shown, input.decisions));
  } else {
    // no conflict left: a tick that could not be applied is still said
    conflicts.push(...decideSection([], input.decisions));
  }
  // whole while the conflict table is whole; a line once the body has to shorten it
  conflicts.push(...clashSection(input.clashes ?? [], d.conflictSection && d.conflictRows >= input.conflicts.length));
  return [...head, ...changes, ...conflicts, ...provenance, ...footer].join('\n');
}

/**
 * The conflicts' heading counts those still open (a reviewer's work left); the ones decided on
 * this proposal are said apart, so a decided conflict no longer reads as one to decide.
 */
function conflictsHeading(open: number, decided: number): string {
  return decided === 0 ? `### Conflicts (${open})` : `### Conflicts (${open} open, ${decided} decided)`;
}

/** The clashes of the carried commits with this update: a table, or (`whole` false) a line. */
function clashSection(clashes: readonly Conflict[], whole: boolean): string[] {
  if (clashes.length === 0) return [];
  const title = `### Clashes with commits on this branch (${clashes.length})`;
  if (!whole) return [title, '', "The list is in the run's report.", ''];
  return [
    title,
    '',
    "A commit on this branch that kdelta did not make changed these fields, and this update changes them too: origin is kdelta's last commit on the branch, upstream this update, local the branch.",
    '',
    ...conflictTable(clashes),
    '',
  ];
}

/**
 * The conflict table of a proposal body (a preview shows the same one): resource, field, the three
 * values, rule, kept; a conflict decided on the proposal says so in its last column.
 */
export function conflictTable(conflicts: readonly Conflict[], decided: readonly DecidedConflict[] = []): string[] {
  const row = (c: Conflict, kept: string) => {
    // long values: origin's size or window, and what upstream and local each changed
    const views = conflictViews(c.values);
    const cell = (side: 'origin' | 'upstream' | 'local') => (views ? renderPieces(views[side], 'cell') : value(c.values[side], 'cell'));
    return `| ${inert(shortName(c.resource))} | ${inert(shortName(c.path), 'cell')} | ${cell('origin')} | ${cell('upstream')} | ${cell('local')} | ${c.rule} | ${kept} |`;
  };
  return [
    '| resource | field | origin | upstream | local | rule | kept |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...conflicts.map((c) => row(c, c.winner)),
    ...decided.map((d) => row(d.conflict, `${d.choice.take === 'local' ? 'kept local' : 'took upstream'} (decided on this proposal)`)),
  ];
}

export interface ProposalBodies {
  /** What the proposal carries: at most `limit` characters. */
  readonly body: string;
  /** Everything (the run's report and the Action's job summary show it). */
  readonly full: string;
  readonly shortened: boolean;
}

/**
 * The proposal body, degraded step by step until it fits `limit`: no resource table, then no list
 * of upstream's changes, fewer conflict rows (and boxes), fewer file lines, no conflict table, no
 * file list. Long names are
 * shortened with a hash before that (see {@link shortName}). A shortened body says so; the
 * metadata block at the end is always kept whole.
 */
export function renderProposalBodies(input: ProposalBodyInput, limit: number = MAX_BODY): ProposalBodies {
  const all: Detail = {
    conflictRows: input.conflicts.length,
    resourceTable: true,
    upstreamDetail: true,
    fileLines: input.changes.length,
    conflictSection: true,
    changeSection: true,
  };
  const full = renderWith(input, all, false);
  if (full.length <= limit) return { body: full, full, shortened: false };
  // the resource table goes first, then what upstream changed field by field: the conflicts and
  // their boxes are what a reviewer acts on
  const ladder: Detail[] = [{ ...all, resourceTable: false }];
  for (let rows = input.conflicts.length; ; rows = Math.floor(rows / 2)) {
    ladder.push({ ...all, resourceTable: false, upstreamDetail: false, conflictRows: rows });
    if (rows === 0) break;
  }
  const lean = { ...all, conflictRows: 0, resourceTable: false, upstreamDetail: false };
  for (let lines = Math.floor(input.changes.length / 2); ; lines = Math.floor(lines / 2)) {
    ladder.push({ ...lean, fileLines: lines });
    if (lines === 0) break;
  }
  ladder.push({ ...lean, fileLines: 0, conflictSection: false });
  ladder.push({ ...lean, fileLines: 0, conflictSection: false, changeSection: false });
  for (const d of ladder) {
    const text = renderWith(input, d, true);
    if (text.length <= limit) return { body: text, full, shortened: true };
  }
  // Only a huge title or summary gets here: cut the text, never the metadata block.
  const last = renderWith(input, ladder[ladder.length - 1]!, true);
  const tail = last.slice(last.lastIndexOf('\n---\n'));
  return { body: `${last.slice(0, Math.max(0, limit - tail.length - 2))}…\n${tail}`.slice(-limit), full, shortened: true };
}

export function renderProposalBody(input: ProposalBodyInput): string {
  return renderProposalBodies(input).body;
}
