import { createHash } from 'node:crypto';

/**
 * The one way text from strangers (package content, downstream repositories, error messages, the
 * text of pull requests) reaches Markdown: proposal bodies, the preview comment, the dashboard,
 * the job summary and the local records all write it through {@link inert}. Whatever the text,
 * GitHub renders it as text only: no element, no link, no image, no mention, no way out of the
 * code span or the table cell it sits in, and never an HTML comment's opener or closer, so none
 * of kdelta's hidden markers can be forged by it.
 */

/**
 * Where the text goes:
 * - `text`: inline prose (a paragraph, a list item, a table cell);
 * - `code`: an inline code span, outside a table;
 * - `cell`: an inline code span inside a table cell (`|` would end the cell);
 * - `html`: inside a raw HTML line (a `<summary>`), where Markdown is not parsed.
 */
export type MarkdownContext = 'text' | 'code' | 'cell' | 'html';

/** Line breaks of every kind (CR, LS and PS too) and the other control characters: a line of its own is where forged markup starts. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const BREAKS = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/g;
/**
 * The ASCII punctuation that can start markup, each escaped with a backslash (CommonMark lets
 * every one be), and no more, so that a local record stays readable as it is:
 * - emphasis, code, links, images, HTML, entities, tables, math: `! # $ & * + < = > [ \ ] ^ _ \` { | } ~`;
 * - `-` after a space or beside another one (a list, a rule, a comment's closer), never in a
 *   name like `my-app`;
 * - `.` after `www` and `:` before `//` (GFM's literal autolinks), `.` or `)` after leading
 *   digits (an ordered list).
 * `@` is the mention's, handled apart.
 */
const PUNCTUATION = /[!#$&*+<=>[\\\]^_`{|}~]|(?<=^|[\s-])-|-(?=-)|(?<=www)\.|:(?=\/\/)|(?<=^\d+)[.)]/gi;
/** GitHub links `@name` in rendered text (not in code): a zero-width space after `@` keeps it text. */
const MENTION = /@/g;
const ZWSP = '\u200b';

/** An HTML comment's opener or closer, broken by a zero-width space (the text reads the same). */
function noComment(text: string): string {
  return text.replace(/<!--/g, `<!-${ZWSP}-`).replace(/--(?=>)/g, `-${ZWSP}-`);
}

function codeSpan(text: string, cell: boolean): string {
  // in a cell a pipe is written `\|`; a backslash of the text before it would take that escape away
  const t = noComment(cell ? text.replace(/\\(?=\|)/g, `\\${ZWSP}`).replace(/\|/g, '\\|') : text);
  // a fence longer than the longest run of backticks inside: nothing in the text closes it
  const longest = Math.max(0, ...[...t.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  // CommonMark strips one space at each end when both are there: pad so the text stays as it is
  const pad = t === '' || /^[` ]|[` ]$/.test(t) ? ' ' : '';
  return `${fence}${pad}${t}${pad}${fence}`;
}

/** `text` as inert Markdown for `context` (see {@link MarkdownContext}); line breaks become spaces. */
export function inert(text: string, context: MarkdownContext = 'text'): string {
  const line = text.replace(BREAKS, ' ');
  switch (context) {
    case 'text':
      // leading spaces would make an indented code block of text that starts a line
      return line
        .trimStart()
        .replace(PUNCTUATION, (c) => `\\${c}`)
        .replace(MENTION, `@${ZWSP}`);
    case 'code':
      return codeSpan(line, false);
    case 'cell':
      return codeSpan(line, true);
    case 'html':
      return line
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&#39;')
        .replace(MENTION, `@${ZWSP}`);
    default:
      return context satisfies never;
  }
}

/**
 * A link to a web address kdelta was given (a forge's page of a proposal, a commit, a compare):
 * `[label](url)` when the address is http(s) and holds nothing that could end the link early;
 * undefined otherwise (then the caller writes the address as text). `label` is kdelta's own text.
 */
export function webLink(label: string, url: string): string | undefined {
  return /^https?:\/\/[^\s()<>[\]`]+$/.test(url) ? `[${label}](${url})` : undefined;
}

/** The most characters a name (resource, file, field path) keeps in a body before it is shortened. */
export const MAX_NAME = 160;

/**
 * A name cut to `max` characters, ending in a hash of the whole name so two long names that
 * start alike stay apart: long names are shortened before anything is left out of a body.
 */
export function shortName(text: string, max: number = MAX_NAME): string {
  if (text.length <= max) return text;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return `${text.slice(0, Math.max(0, max - hash.length - 2))}…#${hash}`;
}

/**
 * A value as JSON for a hidden HTML comment (the metadata block, the dashboard's data) on one
 * line: `--`, `<` and `>` never appear as themselves (JSON's `\u` escapes read back the same), so
 * strangers' text in it can neither close the comment nor open markup.
 */
export function hiddenJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/--/g, '-\\u002d')
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}
