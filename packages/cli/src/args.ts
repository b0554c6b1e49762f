import { parseArgs } from 'node:util';
import { UsageError } from './command.js';

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly short?: string;
}

export interface ParsedFlags {
  readonly values: Readonly<Record<string, string | boolean | readonly (string | boolean)[] | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Strict flag parsing for a command: unknown flags and missing values become UsageErrors
 * that say which flag was wrong, instead of node's generic messages.
 */
export function parseFlags(args: readonly string[], options: Readonly<Record<string, FlagSpec>>): ParsedFlags {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: options as Record<string, FlagSpec & { multiple?: boolean }>,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, '.'));
  }
  rejectConflictingRepeats(parsed.tokens, options);
  return { values: parsed.values as ParsedFlags['values'], positionals: parsed.positionals };
}

/**
 * A single-valued flag given twice: node keeps the last value silently, so `--ref v1 --ref v2`
 * would quietly mean v2. The same value twice is harmless; different values are a usage error.
 */
function rejectConflictingRepeats(
  tokens: readonly { kind: string; name?: string; value?: string | undefined }[],
  options: Readonly<Record<string, FlagSpec>>,
): void {
  const seen = new Map<string, string>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name === undefined || t.value === undefined) continue;
    const spec = options[t.name];
    if (!spec || spec.multiple) continue;
    const before = seen.get(t.name);
    if (before !== undefined && before !== t.value) {
      throw new UsageError(`--${t.name} given twice with different values: ${JSON.stringify(before)} and ${JSON.stringify(t.value)}`);
    }
    seen.set(t.name, t.value);
  }
}

export function stringFlag(flags: ParsedFlags, name: string): string | undefined {
  const v = flags.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function stringsFlag(flags: ParsedFlags, name: string): string[] {
  const v = flags.values[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
}

export function booleanFlag(flags: ParsedFlags, name: string): boolean {
  return flags.values[name] === true;
}

/** The value of a flag that must be one of a few words. */
export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`--${flag} must be one of ${allowed.join(', ')} (got "${value}")`);
}

/** `--name=true|false`, `--name` alone meaning true. */
export function boolWord(flag: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === 'true' || value === '') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${flag} must be true or false (got "${value}")`);
}
