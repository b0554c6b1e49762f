import type { Command } from '../command.js';
import pkgDiff from './pkg-diff.js';
import pkgGet from './pkg-get.js';
import pkgUpdate from './pkg-update.js';
import merge3 from './merge3.js';
import variantApply from './variant-apply.js';
import variantsetExpand from './variantset-expand.js';
import runCommand from './run.js';
import previewCommand from './preview.js';
import proposals from './proposals.js';
import decide from './decide.js';
import dashboard from './dashboard.js';
import fnRender from './fn-render.js';
import status from './status.js';
import rollout from './rollout.js';

// One line per command module; each module default-exports its Command.
export const commands: readonly Command[] = [
  pkgGet,
  pkgUpdate,
  pkgDiff,
  merge3,
  variantApply,
  variantsetExpand,
  runCommand,
  previewCommand,
  proposals,
  decide,
  dashboard,
  fnRender,
  status,
  rollout,
];
