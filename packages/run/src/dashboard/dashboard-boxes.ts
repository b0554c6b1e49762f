import { TICK } from './dashboard.js';
import { codeSpans } from '../propose/decide-boxes.js';
import { RunError } from '../errors.js';

/**
 * The dashboard's boxes, found and ticked by `kdelta decide --dashboard` on the local forge (where
 * a person would otherwise edit the Markdown file by hand). Read as `parseDashboard` reads ticks:
 * only boxes with kdelta's well-formed marker. Pure: text in, text out.
 */

export type DashboardBoxKind = 'retry' | 'allow-removals' | 'repropose';

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
