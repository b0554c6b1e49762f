export {
  renderPackage,
  RUNTIMES,
  type RenderFailure,
  type RenderFailureCode,
  type RenderOptions,
  type RenderOutcome,
  type RuntimeChoice,
} from './render.js';
export { ANY_IMAGE, DEFAULT_ALLOWED_IMAGES, allowanceFor, imageAllowed, imagePatternProblem } from './images.js';
export { renderDirectory, type DirectoryRenderOutcome } from './disk.js';
export { functionName, resultLine, resultsYaml, type FunctionResult, type KrmResult, type Severity } from './results.js';
export { BUILTINS, builtinName } from './builtins/index.js';
export { containerArgs, detectContainerRuntime } from './runners.js';
export { fieldChanges, type FieldStep, type ResourceChange } from './changes.js';
