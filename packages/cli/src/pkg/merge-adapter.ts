import * as mergeCore from '@kdelta/merge-core';
import type { PkgFile } from './tree.js';

/** The part of @kdelta/merge-core's resource merge that pkg update uses. */
export interface ResourceConflict {
  readonly message?: string;
  readonly path?: unknown;
  readonly file?: string;
  readonly resource?: unknown;
  readonly [key: string]: unknown;
}

export interface ResourceReportEntry {
  readonly [key: string]: unknown;
}

export interface MergeFilesResult {
  readonly files: PkgFile[];
  readonly report: readonly ResourceReportEntry[];
  readonly conflicts: readonly ResourceConflict[];
}

type MergeFiles = (
  input: { origin: PkgFile[]; upstream: PkgFile[]; local: PkgFile[] },
  options?: { strategy?: 'upstream-wins' | 'local-wins' | 'fail'; inferKeys?: boolean },
) => MergeFilesResult;

/** merge-core's `mergeFiles`, or an error saying that the resource merge is not available. */
export function mergeFiles(input: { origin: PkgFile[]; upstream: PkgFile[]; local: PkgFile[] }): MergeFilesResult {
  const fn = (mergeCore as Record<string, unknown>)['mergeFiles'] as MergeFiles | undefined;
  if (typeof fn !== 'function') {
    throw new Error('the resource-merge strategy needs @kdelta/merge-core mergeFiles, which this build does not have');
  }
  return fn(input, { strategy: 'upstream-wins', inferKeys: true });
}

export function hasResourceMerge(): boolean {
  return typeof (mergeCore as Record<string, unknown>)['mergeFiles'] === 'function';
}
