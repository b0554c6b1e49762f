import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { describe, expect, it } from 'vitest';
import { dashboardEntries, renderDashboard } from './dashboard/dashboard.js';
import { previewOf } from './preview/preview.js';
import { renderPreview } from './preview/preview-render.js';
import { renderProposalBodies } from './propose/proposal-body.js';
import type { VariantResult } from './report/result.js';

// Every writer of Markdown, fed the forgeries of the issue where strangers' text goes (resource
// kinds and names, file names, field paths, values, error messages): GitHub must show them as
// text, never as a heading, a link, an image or a mention.

const HOSTILE = [
  '</details><h2>FORGED: safe to merge</h2>',
  '@org/everyone',
  '![t](https://tracker.example/p.png)',
  '``</code><img src=x>``',
  'www.tracker.example',
];
const hostile = HOSTILE.join(' ');

function render(markdown: string): string {
  return micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()], allowDangerousHtml: true });
}

/** What must never come out of strangers' text, whoever writes it. */
function expectInert(markdown: string): void {
  const html = render(markdown);
  expect(html).not.toMatch(/<h2>FORGED/);
  expect(html).not.toMatch(/<img/);
  expect(html).not.toMatch(/href="https?:\/\/(www\.)?tracker\.example/);
  const outsideCode = html.replace(/<code>[\s\S]*?<\/code>/g, ' ').replace(/<[^>]*>/g, ' ');
  expect(outsideCode).not.toMatch(/@(org|everyone)/);
}

const conflict = (over: Partial<Conflict> = {}): Conflict => ({
  resource: `apps/${hostile} web`,
  file: `${hostile}.yaml`,
  path: `.data.${hostile}`,
  values: { origin: 'a', upstream: hostile, local: `x ${hostile}` },
  rule: 'upstream-changed',
  winner: 'upstream',
  message: '',
  ...over,
});

function result(over: Partial<VariantResult> = {}): VariantResult {
  return {
    variant: 'web',
    downstream: 'cluster-01/web',
    action: 'proposed',
    writes: true,
    dryRun: true,
    conflicts: [conflict()],
    conflictCount: 1,
    changes: [{ status: 'modified', path: `web/${hostile}.yaml` }],
    resources: [{ resource: `apps/${hostile} web`, file: `${hostile}.yaml`, action: 'merged', changed: true } as unknown as ResourceReport],
    ...over,
  } as VariantResult;
}

describe("strangers' text is inert in every writer", () => {
  it.each([
    {
      writer: 'the proposal body',
      markdown: () =>
        renderProposalBodies({
          title: 'kdelta: update web',
          summary: 'Updates package `web`.',
          downstream: { repo: 'https://github.com/org/cluster-01', branch: 'main', directory: 'web' },
          changes: [{ status: 'modified', path: `web/${hostile}.yaml` }],
          resources: [
            { resource: `apps/${hostile} web`, file: `${hostile}.yaml`, action: 'merged', changed: true } as unknown as ResourceReport,
          ],
          conflicts: [conflict()],
          carried: [{ sha: 'c'.repeat(40), name: hostile, subject: hostile }],
          notReady: [{ type: 'ready', message: hostile }],
          metadata: {
            version: '1',
            variant: 'web',
            fingerprint: 'f',
            headCommit: 'a'.repeat(40),
            baseCommit: 'b'.repeat(40),
            conflicts: 1,
            kind: 'variant',
            upstream: { repo: 'https://github.com/org/catalog', ref: 'v2', commit: 'c'.repeat(40), reason: hostile },
          },
        }).body,
    },
    {
      writer: 'the preview comment',
      markdown: () =>
        renderPreview(
          previewOf(
            {
              version: '1',
              dryRun: true,
              mode: 'variants',
              results: [
                result({ wave: { name: hostile, index: 0 } }),
                result({ variant: 'bad', action: 'failed', error: hostile, conflicts: [], conflictCount: 0 }),
              ],
              warnings: [hostile],
              failed: 1,
            },
            { config: '.kdelta' },
          ),
        ),
    },
    {
      writer: 'the fleet dashboard',
      markdown: () =>
        renderDashboard({
          title: 'kdelta dashboard',
          marker: '<!-- kdelta-dashboard: dashboard -->',
          entries: dashboardEntries([
            result({ dryRun: false, fingerprint: 'f' }),
            result({ variant: 'bad', action: 'failed', error: hostile, conflicts: [], conflictCount: 0 }),
            result({ variant: 'stop', action: 'blocked', message: hostile, conflicts: [], conflictCount: 0 }),
            result({ variant: 'held', action: 'deferred', heldBy: hostile, message: hostile, conflicts: [], conflictCount: 0 }),
          ]),
          // a revision is an upstream's tag, a reason may quote a downstream's health signal
          rollouts: [
            {
              policy: 'platform',
              upstream: `catalog/${hostile}`,
              revision: hostile,
              commit: 'c'.repeat(40),
              waves: [
                { name: hostile, variants: 1, merged: 1 },
                { name: 'prod', variants: 2, merged: 0 },
              ],
              reached: hostile,
              proposing: 'prod',
              waitingOn: [hostile, `merge of web in ${hostile}`],
              advancedTo: hostile,
            },
            {
              policy: 'p',
              upstream: 'u',
              revision: 'r',
              commit: 'c',
              waves: [{ name: 'w', variants: 1, merged: 0 }],
              waitingOn: [],
              halted: hostile,
            },
          ],
        }),
    },
  ])('$writer', ({ markdown }) => {
    expectInert(markdown());
  });
});
