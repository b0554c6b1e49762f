/**
 * The one call that 3-way merges the Kptfile's mergeable sections as a YAML value, with kyaml
 * MergeStrings semantics and `name`-inferred list keys (what kpt's Kptfile merge uses).
 */
import * as mergeCore from '@kdelta/merge-core';

export interface ValueMergeInput {
  origin?: string;
  upstream?: string;
  local?: string;
}

export interface ValueMergeOutput {
  text: string;
  conflicts: readonly unknown[];
}

type Merge3Text = (input: ValueMergeInput, options?: { rules?: 'kyaml' | 'kpt'; inferKeys?: boolean }) => ValueMergeOutput;

export function mergeValueText(input: ValueMergeInput): ValueMergeOutput {
  const merge3Text = (mergeCore as Record<string, unknown>)['merge3Text'] as Merge3Text | undefined;
  if (typeof merge3Text !== 'function') {
    throw new Error('@kdelta/merge-core does not export merge3Text: the Kptfile merge needs it');
  }
  return merge3Text(input, { rules: 'kyaml', inferKeys: true });
}
