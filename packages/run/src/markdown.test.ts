import fc from 'fast-check';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { describe, expect, it } from 'vitest';
import { inert, type MarkdownContext, shortName } from './markdown.js';

/** GitHub-flavoured Markdown to HTML, raw HTML let through as GitHub lets some through. */
function render(markdown: string): string {
  return micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()], allowDangerousHtml: true });
}

/** Each context in the place a writer puts it, and the HTML tags that place alone yields. */
const PLACES: Record<MarkdownContext, { wrap: (s: string) => string; tags: string[] }> = {
  text: { wrap: (s) => `- ${s} after\n\nbefore ${s}\n`, tags: ['ul', 'li', 'p'] },
  code: { wrap: (s) => `before ${s} after\n`, tags: ['p', 'code'] },
  cell: {
    wrap: (s) => `| a | b |\n| --- | --- |\n| ${s} | end |\n`,
    tags: ['table', 'thead', 'tbody', 'tr', 'th', 'td', 'code'],
  },
  html: { wrap: (s) => `<details><summary>${s}</summary>\n\n</details>\n`, tags: ['details', 'summary'] },
};

/** Fragments that turn text into markup somewhere in GitHub's Markdown. */
const HOSTILE = [
  '</details><h2>FORGED: safe to merge</h2>',
  '@org/everyone',
  '@octocat',
  '![t](https://tracker.example/p.png)',
  '[x](javascript:alert(1))',
  '``',
  '`',
  '|',
  '\\|',
  '<!-- kdelta: {"decided":[]} -->',
  '-->',
  'www.evil.example',
  'https://evil.example/x',
  'x@y.example',
  '<https://a.example>',
  '\r',
  '\n',
  '\u2028',
  '\u2029',
  '\n\n# heading\n',
  '\n- [x] <!-- kdelta-decide:0123456789abcdef --> box',
  '&lt;b&gt;',
  '&#64;octocat',
  '*',
  '_',
  '~~',
  '<b>',
  '<img src=x>',
  '\\',
  ' ',
  '    ',
  'WWW.Evil.example',
  '_www.e.com',
  '(http://a.example)',
  '*www.x.example*',
  '~http://x.example~',
  'mailto:a@b.example',
  'xmpp:a@b.example/r',
  '1. item',
  '1) item',
  '10.',
  '$x$',
  '$$',
  '> quote',
  '===',
  '- - -',
  '[^1]',
];

const hostileString = fc
  .array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'grapheme-ascii' }), fc.string({ unit: 'binary' })), { maxLength: 8 })
  .map((parts) => parts.join(''));

function tagsOf(html: string): string[] {
  return [...html.matchAll(/<\/?([A-Za-z][A-Za-z0-9-]*)/g)].map((m) => m[1]!.toLowerCase());
}

/** The text a reader sees outside code, entities decoded: GitHub looks for mentions there. */
function visibleText(html: string): string {
  return html
    .replace(/<code>[\s\S]*?<\/code>/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(Number.parseInt(n, 16)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

describe('inert: any text renders as text only', () => {
  it.each(Object.keys(PLACES) as MarkdownContext[])('%s', (context) => {
    const place = PLACES[context];
    const expected = render(place.wrap(inert('plain', context)));
    fc.assert(
      fc.property(hostileString, (text) => {
        const out = inert(text, context);
        const html = render(place.wrap(out));
        // no element of its own: exactly the tags the place yields with plain text
        expect(tagsOf(html)).toEqual(tagsOf(expected));
        expect(tagsOf(html).every((t) => place.tags.includes(t))).toBe(true);
        // no mention GitHub would link, no comment opener or closer in the Markdown written
        expect(visibleText(html)).not.toMatch(/@[A-Za-z0-9]/);
        expect(out).not.toMatch(/<!--|-->/);
        expect(out).not.toMatch(/[\r\n\u2028\u2029]/);
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    { context: 'text' as const, text: 'a*b*c', shows: 'a*b*c' },
    { context: 'text' as const, text: 'apps/Deployment my-app', shows: 'apps/Deployment my-app' },
    { context: 'code' as const, text: 'a ``b`` c', shows: '<code>a ``b`` c</code>' },
    { context: 'code' as const, text: '`x`', shows: '<code>`x`</code>' },
    { context: 'cell' as const, text: 'a|b', shows: '<code>a|b</code>' },
    { context: 'html' as const, text: '<b>x</b>', shows: '&lt;b&gt;x&lt;/b&gt;' },
  ])('$context keeps the text readable: $text', ({ context, text, shows }) => {
    expect(render(PLACES[context].wrap(inert(text, context)))).toContain(shows);
  });
});

describe('shortName', () => {
  it('keeps a short name, cuts a long one to the limit with a hash of the whole', () => {
    expect(shortName('web')).toBe('web');
    const a = shortName(`${'x'.repeat(70_000)}a`, 80);
    const b = shortName(`${'x'.repeat(70_000)}b`, 80);
    expect(a).toHaveLength(80);
    expect(a).not.toBe(b);
  });
});
