import { TICK } from './dashboard.js';
import { codeSpans } from '../propose/decide-boxes.js';
import { RunError } from '../errors.js';
import { namesRevision } from '../policy/rollout.js';
import { parseAdvanceSubject, type RolloutTickKind } from './rollout-boxes.js';

/**
 * The dashboard's boxes, found and ticked by `kdelta decide --dashboard` on the local forge (where
 * a person would otherwise edit the Markdown file by hand). Read as `parseDashboard` reads ticks:
 * only boxes with kdelta's well-formed marker. Pure: text in, text out.
 */

export type DashboardBoxKind = 'retry' | 'allow-removals' | 'repropose' | 'advance-rollout' | 'halt-rollout' | 'resume-rollout';

export interface DashboardBox {
  readonly kind: DashboardBoxKind;
  /** What the box acts on: a job key (`<variant> <downstream>`), a removal set, a declined proposal's URL. */
  readonly subject: string;
  readonly ticked: boolean;
  /** The box's text after its marker. */
  readonly label: string;
  /** The names its label shows (variant, downstream...), as text. */
  readonly names: readonly string[];
  /** Its line in the text (0-based). */
  readonly line: number;
}

export function dashboardBoxes(body: string): DashboardBox[] {
  const boxes: DashboardBox[] = [];
  body.split('\n').forEach((line, i) => {
    const m = TICK.exec(line);
    if (!m) return;
    let subject: string;
    try {
      subject = decodeURIComponent(m[3]!);
    } catch {
      return; // a marker a person mangled: no box a run would read
    }
    const label = line.slice(m[0].length).trim();
    boxes.push({ kind: m[2] as DashboardBoxKind, subject, ticked: m[1] !== ' ', label, names: codeSpans(label), line: i });
  });
  return boxes;
}

/**
 * The one open box of `kind` that `what` names: its subject, or a name its label shows (a
 * variant, a downstream); with `what` absent, the only open box of that kind. Throws a RunError
 * `no-such-box` or `ambiguous-box` listing the open boxes of that kind.
 */
export function selectDashboardBox(boxes: readonly DashboardBox[], kind: DashboardBoxKind, what: string | undefined): DashboardBox {
  const open = boxes.filter((b) => b.kind === kind && !b.ticked);
  const found = what === undefined ? open : open.filter((b) => b.subject === what || b.names.includes(what));
  if (found.length === 1) return found[0]!;
  const listing = (list: readonly DashboardBox[]) => list.map((b) => `  ${b.label}`).join('\n');
  if (found.length === 0) {
    throw new RunError(
      'no-such-box',
      open.length === 0
        ? `the dashboard has no open ${kind} box`
        : `no open ${kind} box of the dashboard is "${what}"; its open ${kind} boxes:\n${listing(open)}`,
    );
  }
  throw new RunError(
    'ambiguous-box',
    `${found.length} open ${kind} boxes${what === undefined ? '' : ` name "${what}"`}: name one (a variant, or "<variant> <downstream>"):\n${listing(found)}`,
  );
}

/**
 * The one open rollout box of `kind` (`kdelta rollout advance|halt|resume`) of the rollout of
 * `revision` (its tag, or the tag without the package's prefix) under policy `policy`. Throws a
 * RunError `no-such-rollout` or `ambiguous-box` listing the open boxes of that kind.
 */
export function selectRolloutBox(boxes: readonly DashboardBox[], kind: RolloutTickKind, policy: string, revision: string): DashboardBox {
  const open = boxes.filter((b) => b.kind === kind && !b.ticked);
  const found = open.filter((b) => {
    const key = kind === 'advance-rollout' ? parseAdvanceSubject(b.subject)?.key : b.subject;
    const [p, , r] = (key ?? '').split(' ');
    return p === policy && r !== undefined && namesRevision(revision, { revision: r, commit: '' });
  });
  if (found.length === 1) return found[0]!;
  const listing = (list: readonly DashboardBox[]) => list.map((b) => `  ${b.label}`).join('\n');
  const what = kind.replace('-rollout', '');
  if (found.length === 0) {
    throw new RunError(
      'no-such-rollout',
      open.length === 0
        ? `the dashboard has no rollout to ${what} (its Rollouts section lists the rollouts under way)`
        : `no rollout of ${revision} under policy ${policy} can ${what}; the rollouts that can:\n${listing(open)}`,
    );
  }
  throw new RunError(
    'ambiguous-box',
    `${found.length} rollouts of ${revision} under policy ${policy} can ${what} (several upstream packages): tick one on the dashboard:\n${listing(found)}`,
  );
}
