/**
 * Printing a Kptfile in kpt's canonical shape: the field order of kpt's Go types, empty values
 * left out (`omitempty`), string maps sorted by key, a present-but-empty section as `{}`. This is
 * what kpt writes after a merge; `printKptfile` (print.ts) instead keeps the user's document.
 */
import { yamlDocumentOptions } from '@kdelta/merge-core';
import { Document } from 'yaml';
import { KPTFILE_SPEC } from './decode.js';
import type { Kptfile } from './types.js';

/** Sections that kpt holds as pointers: printed as `{}` when present but empty. */
const POINTER_PATHS = new Set(['upstream', 'upstreamLock', 'info', 'pipeline', 'inventory', 'status', 'upstream.git', 'upstreamLock.git']);
/** Fields kpt always prints, even empty (no `omitempty`). */
const ALWAYS = new Set(['info.readinessGates[].conditionType', 'status.conditions[].type', 'status.conditions[].status']);

type SpecNode = typeof KPTFILE_SPEC;

function shape(value: unknown, spec: SpecNode, path: string): unknown {
  switch (spec.t) {
    case 'string':
    case 'enum':
      return value === undefined || value === '' ? undefined : value;
    case 'stringMap': {
      const m = value as Record<string, string> | undefined;
      if (!m || Object.keys(m).length === 0) return undefined;
      const out: Record<string, string> = {};
      for (const k of Object.keys(m).sort()) out[k] = m[k] ?? '';
      return out;
    }
    case 'list': {
      const l = value as unknown[] | undefined;
      if (!l || l.length === 0) return undefined;
      return l.map((item) => shape(item, spec.of, `${path}[]`) ?? {});
    }
    case 'object': {
      if (value === undefined || value === null) return undefined;
      const o = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [k, sub] of Object.entries(spec.fields)) {
        const p = path ? `${path}.${k}` : k;
        const v = shape(o[k], sub, p);
        if (v !== undefined) out[k] = v;
        else if (ALWAYS.has(p)) out[k] = o[k] ?? '';
      }
      if (Object.keys(out).length === 0 && !POINTER_PATHS.has(path) && path !== '') return undefined;
      return out;
    }
  }
}

export interface FormatOptions {
  /**
   * `wide` puts `- ` two spaces under the parent key (kpt's `WriteFile`), `compact` at the
   * parent's indentation (kpt's `yaml.Marshal`). Default `wide`.
   */
  sequenceIndent?: 'wide' | 'compact';
}

/** The Kptfile as kpt would write it (see the module comment). Ends with one newline. */
export function formatKptfile(kptfile: Kptfile, options: FormatOptions = {}): string {
  const value = shape(kptfile, KPTFILE_SPEC, '') ?? {};
  const doc = new Document(value, yamlDocumentOptions);
  return doc.toString({ indentSeq: (options.sequenceIndent ?? 'wide') === 'wide', lineWidth: 0 });
}
