import { describe, expect, it } from 'vitest';
import type { VariantResult } from '@kdelta/run';
import { LiveProgress, progressLine } from './run-progress.js';

function result(variant: string, extra: Partial<VariantResult> = {}): VariantResult {
  return {
    variant,
    downstream: `cluster/${variant}`,
    action: 'proposed',
    writes: true,
    dryRun: false,
    conflicts: [],
    conflictCount: 0,
    ...extra,
  };
}

/** What a terminal shows after `text` is written: cursor-up-and-clear sequences applied. */
function screen(text: string): string[] {
  const lines: string[] = [''];
  const esc = String.fromCharCode(27);
  const re = new RegExp(`${esc}\\[(\\d+)F${esc}\\[J|([^${esc}]+)`, 'g');
  for (const m of text.matchAll(re)) {
    if (m[1] !== undefined) {
      lines.splice(lines.length - 1 - Number(m[1]), Number(m[1]) + 1, '');
    } else {
      const parts = m[2]!.split('\n');
      lines[lines.length - 1] = `${lines[lines.length - 1] ?? ''}${parts[0] ?? ''}`;
      lines.push(...parts.slice(1));
    }
  }
  return lines.slice(0, -1);
}

describe('progress on stderr', () => {
  it('without a terminal: one line per finished variant', () => {
    expect(progressLine({ type: 'planned', total: 2 })).toBeUndefined();
    expect(progressLine({ type: 'done', result: result('web'), done: 1, total: 2 })).toBe('[1/2] web → cluster/web: proposed\n');
    expect(
      progressLine({ type: 'done', result: result('api', { action: 'failed', error: 'no such repo\nmore' }), done: 2, total: 2 }),
    ).toBe('[2/2] api → cluster/api: failed: no such repo\n');
  });

  it('on a terminal: one block redrawn in place, failures kept above it, cleared at the end', () => {
    const view = new LiveProgress({ columns: 80, startedAt: 0, recent: 2 });
    let out = view.update({ type: 'planned', total: 3 }, 0);
    out += view.update({ type: 'done', result: result('a'), done: 1, total: 3 }, 1000);
    out += view.update({ type: 'done', result: result('b', { action: 'failed', error: 'unreachable' }), done: 2, total: 3 }, 2000);
    out += view.update({ type: 'done', result: result('c', { action: 'unchanged', writes: false }), done: 3, total: 3 }, 2500);
    expect(screen(out)).toEqual([
      '✗ b → cluster/b: failed: unreachable',
      `kdelta run  ${'█'.repeat(20)}  3/3  2.5 s`,
      '  proposed 1 · failed 1 · unchanged 1',
      '  b → cluster/b: failed: unreachable',
      '  c → cluster/c: unchanged',
    ]);
    expect(screen(out + view.tick(4000))[1]).toContain('3/3  4.0 s');
    expect(screen(out + view.finish())).toEqual(['✗ b → cluster/b: failed: unreachable']);
  });

  it('keeps every line within the terminal width', () => {
    const view = new LiveProgress({ columns: 30, startedAt: 0 });
    const out = view.update(
      { type: 'done', result: result('a-very-long-variant-name-indeed', { action: 'failed', error: 'x'.repeat(100) }), done: 1, total: 1 },
      0,
    );
    for (const line of screen(out)) expect(line.length).toBeLessThanOrEqual(29);
  });
});
