/**
 * The one call that 3-way merges the Kptfile's mergeable sections as a YAML value, with kyaml
 * MergeStrings semantics and `name`-inferred list keys (what kpt's Kptfile merge uses).
 */
import { merge3Text, type Conflict } from '@kdelta/merge-core';

export interface ValueMergeInput {
  origin?: string | undefined;
  upstream?: string | undefined;
  local?: string | undefined;
}

export interface ValueMergeOutput {
  text: string;
  conflicts: readonly Conflict[];
}

export function mergeValueText(input: ValueMergeInput, file: string): ValueMergeOutput {
  const r = merge3Text(input, { rules: 'kyaml', inferKeys: true, file });
  return { text: r.text, conflicts: r.conflicts };
}
