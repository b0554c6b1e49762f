/**
 * Durations of a policy (`minimumReleaseAge`, `rollout.soak`): `30s`, `15m`, `2h`, `3d`, `1w`, or
 * several units largest first (`1h30m`, `1w2d`). `0` is no time at all.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  w: 7 * 24 * 3600_000,
  d: 24 * 3600_000,
  h: 3600_000,
  m: 60_000,
  s: 1000,
};
const UNIT_ORDER = 'wdhms';

export const DURATION_EXAMPLES = '30s, 15m, 2h, 3d, 1w or 1h30m';

/** Milliseconds, or the reason `value` is not a duration. */
export function parseDuration(value: unknown): { ok: true; ms: number } | { ok: false; reason: string } {
  if (value === 0 || value === '0') return { ok: true, ms: 0 };
  const bad = { ok: false as const, reason: `expected a duration like ${DURATION_EXAMPLES}, got ${quote(value)}` };
  if (typeof value !== 'string') return bad;
  const parts = [...value.matchAll(/(\d{1,6})([wdhms])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) return bad;
  let ms = 0;
  let last = -1;
  for (const [, n, unit] of parts) {
    const at = UNIT_ORDER.indexOf(unit!);
    // `1h1h` or `30m1h` is a slip, not a sum the writer meant
    if (at <= last) return { ok: false, reason: `${quote(value)}: units go largest first, each once (like 1h30m)` };
    last = at;
    ms += Number(n) * UNIT_MS[unit!]!;
  }
  return { ok: true, ms };
}

/** `5400000` → `1h30m`: the largest units first, as a policy writes it. */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0';
  let rest = Math.round(ms / 1000) * 1000;
  let out = '';
  for (const unit of UNIT_ORDER) {
    const size = UNIT_MS[unit]!;
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out || '0';
}

/** A value of a file, short and quoted: what a message may echo of input it does not trust. */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : value === undefined ? 'nothing' : (JSON.stringify(value) ?? String(value));
  const short = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return typeof value === 'string' ? JSON.stringify(short) : short;
}
