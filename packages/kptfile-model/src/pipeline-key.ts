/**
 * Seed 000 "Pipeline Merge": which identity the pipeline's functions are merged by.
 *
 * 1. `name`, when every function in the three sources has one (and no list repeats a name);
 * 2. else, when no function has a name and no list repeats a key, the derived key: `exec`, else
 *    the image without its tag or digest (a registry port is not a tag);
 * 3. otherwise no identity: the list is atomic and upstream's changed list replaces local's.
 */
import { imageWithoutTag } from './image.js';
import { PIPELINE_LISTS, type KptFunction, type Kptfile } from './types.js';

export type PipelineKeyMode = 'name' | 'derived' | 'none';

/** The derived identity of a function: `exec`, else the image without tag and digest. */
export function derivedFunctionKey(fn: KptFunction): string {
  if (fn.exec) return fn.exec;
  return imageWithoutTag(fn.image ?? '');
}

/** Decides the identity for merging the pipelines of the given Kptfiles (absent ones skipped). */
export function pipelineKeyMode(kptfiles: readonly (Kptfile | undefined)[]): PipelineKeyMode {
  let all = true;
  let none = true;
  let repeats = false;
  let namesRepeat = false;
  for (const kf of kptfiles) {
    for (const list of PIPELINE_LISTS) {
      const fns = kf?.pipeline?.[list] ?? [];
      const keys = new Set<string>();
      const names = new Set<string>();
      for (const fn of fns) {
        if (fn.name) {
          none = false;
          if (names.has(fn.name)) namesRepeat = true;
          names.add(fn.name);
        } else all = false;
        const k = derivedFunctionKey(fn);
        if (keys.has(k)) repeats = true;
        keys.add(k);
      }
    }
  }
  if (all) return namesRepeat ? 'none' : 'name';
  if (none && !repeats) return 'derived';
  return 'none';
}
