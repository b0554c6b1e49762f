import { BOX, DECIDE } from './proposal-body.js';
import { RunError } from '../errors.js';

/**
 * The Decide boxes of a proposal's body, found and ticked by `kdelta decide` on the local forge
 * (where a person would otherwise edit the Markdown by hand): the boxes kdelta wrote, only in
 * the Decide section, read line by line as `tickedChoices` reads them. Pure: text in, text out.
 */

export interface DecideBox {
  /** The box's hidden id (what a run matches a tick by). */
  readonly id: string;
  readonly ticked: boolean;
  /** What ticking it does: keep local's value, or take upstream's. */
  readonly take: 'local' | 'upstream';
  /** The code spans of its label: the value, the field path and any other name it shows. */
  readonly names: readonly string[];
  /** The box's text as the body holds it. */
  readonly label: string;
  /** Its line in the text (0-based). */
  readonly line: number;
}

/** The inline code spans of a label, as text (fence and padding removed, the zero-width breaks of escaping too). */
export function codeSpans(label: string): string[] {
  return [...label.matchAll(/(`+)( ?)([^`]|[^`][\s\S]*?[^`])\2\1(?!`)/g)].map((m) => m[3]!.replace(/\u200b/g, ''));
}

/** The Decide boxes of `text` (a body, or a local forge record holding one), in their order. */
export function decideBoxes(text: string): DecideBox[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const start = lines.lastIndexOf(DECIDE);
  if (start < 0) return [];
  const boxes: DecideBox[] = [];
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('#') || line === '---') break;
    const m = BOX.exec(line);
    if (!m) continue;
    const label = m[3]!.trimEnd();
    boxes.push({
      id: m[2]!,
      ticked: m[1] !== ' ',
      take: label.startsWith('keep local') ? 'local' : 'upstream',
      names: codeSpans(label),
      label,
      line: i,
    });
  }
  return boxes;
}

/**
 * The one box `what` names among those taking `take`: its id (or a prefix of at least 4 of its
 * hex digits), else a field path or resource shown in its label. Throws a RunError `no-such-box`
 * or `ambiguous-box` that lists the boxes to choose from.
 */
export function selectDecideBox(boxes: readonly DecideBox[], take: 'local' | 'upstream', what: string): DecideBox {
  const open = boxes.filter((b) => !b.ticked);
  const byId = /^[0-9a-f]{4,16}$/.test(what) ? boxes.filter((b) => b.id.startsWith(what)) : [];
  const found = byId.length > 0 ? byId : open.filter((b) => b.take === take && b.names.some((n) => sameName(n, what)));
  const listing = (list: readonly DecideBox[]) => list.map((b) => `  ${b.id}  ${b.label}`).join('\n');
  if (found.length === 1) {
    const box = found[0]!;
    if (box.take !== take) {
      throw new RunError('no-such-box', `box ${box.id} takes ${box.take}, not ${take}: ${box.label}`);
    }
    return box;
  }
  if (found.length === 0) {
    const choices = open.filter((b) => b.take === take);
    throw new RunError(
      'no-such-box',
      choices.length === 0
        ? `no open box takes ${take} on this proposal${open.length > 0 ? ` (its open boxes:\n${listing(open)})` : ''}`
        : `no open box takes ${take} for "${what}"; the open boxes that take ${take}:\n${listing(choices)}`,
    );
  }
  throw new RunError('ambiguous-box', `${found.length} boxes take ${take} for "${what}": give one's id:\n${listing(found)}`);
}

/** A field path with or without its leading dot (`.spec.replicas`, `spec.replicas`), or any other name as it is. */
function sameName(shown: string, given: string): boolean {
  return shown === given || shown.replace(/^\./, '') === given.replace(/^\./, '');
}

/** `text` with the box on `line` ticked (`- [x]`); the rest byte for byte. */
export function tickLine(text: string, line: number): string {
  const lines = text.split('\n');
  const at = lines[line];
  if (at === undefined || !/\[ \]/.test(at)) return text;
  lines[line] = at.replace('[ ]', '[x]');
  return lines.join('\n');
}
