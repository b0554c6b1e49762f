import type { RunProgress, VariantResult } from '@kdelta/run';

/**
 * How a run shows its progress on stderr: a line per variant when stderr is not a terminal (logs,
 * CI), a compact block redrawn in place when it is. Both are pure: they turn events into the text
 * to write.
 */

function describe(r: VariantResult): string {
  return r.error
    ? `failed: ${r.error.split('\n')[0]}`
    : `${r.action}${r.dryRun && r.writes ? ' (dry run)' : ''}${r.message ? ` (${r.message})` : ''}`;
}

/** The line for one finished variant (not a TTY). */
export function progressLine(e: RunProgress): string | undefined {
  if (e.type !== 'done') return undefined;
  return `[${e.done}/${e.total}] ${e.result.variant} → ${e.result.downstream}: ${describe(e.result)}\n`;
}

const ESC = '\x1b[';

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

function bar(done: number, total: number, width: number): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

function seconds(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * The live view on a terminal: a status block (bar, counts per action, the last few variants)
 * redrawn in place, and a permanent line above it for every failure, so none scrolls away.
 */
export class LiveProgress {
  private total = 0;
  private done = 0;
  private readonly counts = new Map<string, number>();
  private readonly recent: string[] = [];
  private drawn = 0;

  constructor(private readonly options: { readonly columns: number; readonly startedAt: number; readonly recent?: number }) {}

  /** The text to write for an event at time `now` (ms). */
  update(e: RunProgress, now: number): string {
    let permanent = '';
    if (e.type === 'planned') this.total = e.total;
    else {
      this.total = e.total;
      this.done = e.done;
      const action = e.result.error ? 'failed' : e.result.action;
      this.counts.set(action, (this.counts.get(action) ?? 0) + 1);
      const line = `${e.result.variant} → ${e.result.downstream}: ${describe(e.result)}`;
      if (e.result.error) permanent = `${clip(`✗ ${line}`, this.options.columns - 1)}\n`;
      this.recent.push(line);
      if (this.recent.length > (this.options.recent ?? 3)) this.recent.shift();
    }
    return `${this.erase()}${permanent}${this.draw(now)}`;
  }

  /** Redraw the block (the elapsed time moves on between events). */
  tick(now: number): string {
    return this.drawn === 0 ? '' : `${this.erase()}${this.draw(now)}`;
  }

  /** Clear the block (before the final table is printed). */
  finish(): string {
    return this.erase();
  }

  private erase(): string {
    if (this.drawn === 0) return '';
    const n = this.drawn;
    this.drawn = 0;
    // to the start of the block's first line, then clear to the end of the screen
    return `${ESC}${n}F${ESC}J`;
  }

  private draw(now: number): string {
    const width = Math.max(20, this.options.columns - 1);
    const counts = [...this.counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([a, n]) => `${a} ${n}`)
      .join(' · ');
    const lines = [
      clip(`kdelta run  ${bar(this.done, this.total, 20)}  ${this.done}/${this.total}  ${seconds(now - this.options.startedAt)}`, width),
      clip(`  ${counts || 'starting…'}`, width),
      ...this.recent.map((l) => clip(`  ${l}`, width)),
    ];
    this.drawn = lines.length;
    return `${lines.join('\n')}\n`;
  }
}
