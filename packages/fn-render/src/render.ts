/**
 * `kpt fn render` on a package in memory. Each package's pipeline runs after its subpackages'
 * (depth first, as kpt does), on its own resources and its subpackages' rendered ones: mutators
 * in order, then validators. The tree given is never changed: the result is a new tree, or a
 * failure with the results so far, and nothing else.
 */
import { changesBetween, snapshot } from './changes.js';
import { posix } from 'node:path';
import {
  KptfileError,
  parseKptfile,
  rebuildYamlFile,
  treePath,
  validateFunctionConfig,
  type KptFunction,
  type PackageTree,
  type PackageView,
} from '@kdelta/kptfile-model';
import { BUILTINS, BuiltinConfigError, builtinName } from './builtins/index.js';
import { identity, packageItems, parseResource, plain, printItem, sequenceIndent, type Item, type Plain } from './items.js';
import { decodeResourceList, encodeResourceList, ResourceListError } from './resource-list.js';
import { allowanceFor, DEFAULT_ALLOWED_IMAGES, imageAllowed } from './images.js';
import { functionName, type FunctionResult, type KrmResult } from './results.js';
import { containerArgs, definedEnv, detectContainerRuntime, execPath, functionEnv, runProcess } from './runners.js';
import { selectItems } from './select.js';

/** How image functions run: `auto` a container when a runtime answers, else a built-in. */
export const RUNTIMES = ['auto', 'builtin', 'exec', 'container'] as const;
export type RuntimeChoice = (typeof RUNTIMES)[number];

export interface RenderOptions {
  /** The package to render, a directory of the tree (default: its root). */
  readonly dir?: string;
  /**
   * `auto` (default): `exec:` functions run as processes; images in a container when docker or
   * podman answers, else with kdelta's built-in implementation. `builtin`: images always built-in.
   * `container`: images always in a container. `exec`: only `exec:` functions may run.
   */
  readonly runtime?: RuntimeChoice;
  /** Where relative `exec:` paths are taken from and functions run (kpt: the current directory). */
  readonly cwd?: string;
  /** The environment: `PATH` and the like for functions, `KDELTA_CONTAINER_RUNTIME`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The container runtime command; `null` for none; default: detected (see `detectContainerRuntime`). */
  readonly containerRuntime?: string | null;
  /**
   * Let `exec:` functions run (kpt's `--allow-exec`). Default false: a pipeline with one is refused
   * before any function runs, as an exec function is any program on this machine.
   */
  readonly allowExec?: boolean;
  /**
   * The container images that may run (patterns: see `imageAllowed`); default: kpt's function
   * catalogues (`DEFAULT_ALLOWED_IMAGES`); `[]`: none. A pipeline with an image that would run in a
   * container and is not allowed is refused before any function runs; under `auto` an image that is
   * not allowed but has a built-in runs built-in instead.
   */
  readonly allowedImages?: readonly string[];
  /**
   * Record what each mutator changed (`FunctionResult.changes`: resources and field paths),
   * comparing its resources before and after it in memory. Default false: it reads each resource
   * twice per function.
   */
  readonly changes?: boolean;
}

/** Why a render was refused before any function ran. */
export type RenderFailureCode = 'exec-not-allowed' | 'image-not-allowed';

export interface RenderFailure {
  readonly message: string;
  /** Set when the render was refused before any function ran (nothing was executed). */
  readonly code?: RenderFailureCode;
  /** The package whose pipeline failed (a directory of the tree). */
  readonly package: string;
  /** The function that failed, as written (image or exec), when one did. */
  readonly function?: string;
  /** Where that function is in its package's Kptfile, e.g. `pipeline.mutators[0]`. */
  readonly field?: string;
}

export type RenderOutcome =
  | {
      readonly ok: true;
      /** The rendered tree (a new one; the input is untouched). */
      readonly tree: PackageTree;
      readonly results: readonly FunctionResult[];
      /** Paths of the tree written (new or changed bytes) and deleted by the render. */
      readonly written: readonly string[];
      readonly deleted: readonly string[];
    }
  | { readonly ok: false; readonly results: readonly FunctionResult[]; readonly error: RenderFailure };

class RenderError extends Error {
  constructor(
    message: string,
    readonly pkg: string,
    readonly fn?: string,
    readonly field?: string,
    readonly code?: RenderFailureCode,
  ) {
    super(message);
  }
}

interface Context {
  readonly tree: PackageTree;
  readonly root: string;
  readonly runtime: RuntimeChoice;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  containerRuntime: string | null | undefined;
  readonly allowedImages: readonly string[];
  readonly results: FunctionResult[];
  readonly changes: boolean;
}

/** Renders the package at `options.dir` of `tree` and its subpackages. Never throws for a failing function. */
export async function renderPackage(tree: PackageTree, options: RenderOptions = {}): Promise<RenderOutcome> {
  const root = treePath(options.dir ?? '');
  const ctx: Context = {
    tree,
    root,
    runtime: options.runtime ?? 'auto',
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? process.env,
    containerRuntime: options.containerRuntime,
    allowedImages: options.allowedImages ?? DEFAULT_ALLOWED_IMAGES,
    results: [],
    changes: options.changes === true,
  };
  try {
    if (!tree.package(root).hasKptfile()) throw new RenderError(`${tree.describe(root) || '.'}: not a kpt package (no Kptfile)`, root);
    if (options.allowExec !== true) refuseExec(tree, root);
    refuseImages(ctx);
    if (!hasFunctions(tree, root)) {
      // nothing runs, so nothing changes; the resources are still read, so broken YAML is an error
      for (const dir of renderedPackages(tree, root)) readResources(tree.package(dir));
      return { ok: true, tree: tree.clone(), results: [], written: [], deleted: [] };
    }
    const items = await hydrate(ctx, root);
    const { next, written, deleted } = layout(tree, root, items);
    return { ok: true, tree: next, results: ctx.results, written, deleted };
  } catch (error) {
    if (error instanceof RenderError) {
      return {
        ok: false,
        results: ctx.results,
        error: {
          message: error.message,
          package: error.pkg,
          ...(error.fn !== undefined ? { function: error.fn } : {}),
          ...(error.field !== undefined ? { field: error.field } : {}),
          ...(error.code !== undefined ? { code: error.code } : {}),
        },
      };
    }
    if (error instanceof KptfileError) return { ok: false, results: ctx.results, error: { message: error.message, package: root } };
    throw error;
  }
}

/** The package rendered at `root` and every package nested in it, as tree paths. */
function renderedPackages(tree: PackageTree, root: string): string[] {
  const nested = tree.package(root).nestedPackages({ includeRemote: true, recurseIntoRemote: true });
  return [root, ...nested.map((p) => (root === '' ? p : `${root}/${p}`))];
}

/** Every function of every package the render runs, with its Kptfile and field, in the order of the files. */
function* pipelineFunctions(tree: PackageTree, root: string): Generator<{ dir: string; kptfile: string; fn: KptFunction; field: string }> {
  for (const dir of renderedPackages(tree, root)) {
    const kptfile = tree.describe(`${dir}/Kptfile`);
    const pipeline = parseKptfile(tree.package(dir).kptfileText() ?? '', kptfile).kptfile.pipeline;
    for (const [i, fn] of (pipeline?.mutators ?? []).entries()) yield { dir, kptfile, fn, field: `pipeline.mutators[${i}]` };
    for (const [i, fn] of (pipeline?.validators ?? []).entries()) yield { dir, kptfile, fn, field: `pipeline.validators[${i}]` };
  }
}

/** kpt's rule: no `exec:` function runs without `--allow-exec`; checked in every package before any function runs. */
function refuseExec(tree: PackageTree, root: string): void {
  for (const { dir, kptfile, fn, field } of pipelineFunctions(tree, root)) {
    if (!fn.exec) continue;
    const name = functionName(fn);
    throw new RenderError(
      `${kptfile}: ${field}: function ${JSON.stringify(name)} is an exec function (a program on this machine) and exec functions run only with --allow-exec: pass --allow-exec to allow running function binaries`,
      dir,
      name,
      field,
      'exec-not-allowed',
    );
  }
}

/**
 * How an image function may run under the user's allowed images: as the runtime choice says
 * (`as-chosen`: the image is allowed, or no container would run it), as its built-in because the
 * image may not run in a container (`builtin`), or not at all. The one place the allowance is
 * decided, before the render (`refuseImages`) and for each function.
 */
function imageRoute(ctx: Context, image: string): 'as-chosen' | 'builtin' | 'refused' {
  // --runtime builtin runs no container; --runtime exec runs no image
  if (ctx.runtime === 'builtin' || ctx.runtime === 'exec' || imageAllowed(image, ctx.allowedImages)) return 'as-chosen';
  return ctx.runtime === 'auto' && builtinName(image) !== undefined ? 'builtin' : 'refused';
}

function imageRefusal(ctx: Context, dir: string, kptfile: string, field: string, fn: KptFunction, image: string): RenderError {
  const name = functionName(fn);
  const allowed =
    ctx.allowedImages.length > 0 ? `the allowed images are ${ctx.allowedImages.join(', ')}` : 'no image is allowed to run here';
  return new RenderError(
    `${kptfile}: ${field}: function ${JSON.stringify(name)} would run the container image ${image}, which is not allowed (${allowed}): allow it with --allow-image ${allowanceFor(image)} (the Action's input allowed-images)`,
    dir,
    name,
    field,
    'image-not-allowed',
  );
}

/** No container runs from an image the user did not allow: checked in every package before any function runs. */
function refuseImages(ctx: Context): void {
  for (const { dir, kptfile, fn, field } of pipelineFunctions(ctx.tree, ctx.root)) {
    if (fn.exec || !fn.image) continue;
    const image = catalogImage(fn.image);
    if (imageRoute(ctx, image) === 'refused') throw imageRefusal(ctx, dir, kptfile, field, fn, image);
  }
}

/**
 * Whether any package of the render has a function in its pipeline. Without one, printing every
 * resource again to find that nothing changed is most of a render's time (a big ConfigMap).
 */
function hasFunctions(tree: PackageTree, root: string): boolean {
  return renderedPackages(tree, root).some((dir) => {
    const pipeline = parseKptfile(tree.package(dir).kptfileText() ?? '', tree.describe(`${dir}/Kptfile`)).kptfile.pipeline;
    return (pipeline?.mutators?.length ?? 0) + (pipeline?.validators?.length ?? 0) > 0;
  });
}

/** The package's resources, a YAML error being the render's error. */
function readResources(view: PackageView): void {
  try {
    view.resources();
  } catch (error) {
    if (error instanceof KptfileError) throw new RenderError(error.message, view.dir);
    throw error;
  }
}

/** The packages directly below `dir` (nested ones are theirs to render). */
function childPackages(tree: PackageTree, dir: string): string[] {
  const all = tree.package(dir).nestedPackages({ includeRemote: true, recurseIntoRemote: true });
  return all.filter((p) => !all.some((q) => q !== p && p.startsWith(`${q}/`))).map((p) => (dir === '' ? p : `${dir}/${p}`));
}

async function hydrate(ctx: Context, dir: string): Promise<Item[]> {
  const view = ctx.tree.package(dir);
  const kptfileName = ctx.tree.describe(`${dir}/Kptfile`);
  const parsed = parseKptfile(view.kptfileText() ?? '', kptfileName);
  let items: Item[] = [];
  for (const child of childPackages(ctx.tree, dir)) items.push(...(await hydrate(ctx, child)));
  try {
    // kpt's order: the subpackages' rendered resources, then the package's own
    items = [...items, ...packageItems(view)];
  } catch (error) {
    if (error instanceof KptfileError) throw new RenderError(error.message, dir);
    throw error;
  }
  const pipeline = parsed.kptfile.pipeline;
  for (const [i, fn] of (pipeline?.mutators ?? []).entries())
    items = await runFunction(ctx, dir, fn, `pipeline.mutators[${i}]`, items, true);
  for (const [i, fn] of (pipeline?.validators ?? []).entries()) await runFunction(ctx, dir, fn, `pipeline.validators[${i}]`, items, false);
  return items;
}

function functionConfig(ctx: Context, dir: string, fn: KptFunction, field: string, items: readonly Item[]): Plain | undefined {
  if (fn.configMap && Object.keys(fn.configMap).length > 0) {
    return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'function-input' }, data: { ...fn.configMap } };
  }
  if (fn.configPath === undefined || fn.configPath === '') return undefined;
  const configPath = treePath(fn.configPath);
  // the config as the pipeline has made it so far, as kpt reads it from the resources in memory
  const inMemory = items.find((i) => i.pkg === dir && i.path === configPath);
  if (inMemory) return plain(inMemory);
  const text = ctx.tree.package(dir).text(configPath);
  const where = `${ctx.tree.describe(`${dir}/Kptfile`)}: ${field}.configPath`;
  if (text === undefined)
    throw new RenderError(`${where}: ${JSON.stringify(fn.configPath)} is not a file of the package`, dir, functionName(fn), field);
  const r = validateFunctionConfig(text, fn.configPath);
  if (!r.ok) throw new RenderError(`${where}: ${r.message}`, dir, functionName(fn), field);
  return r.config;
}

/** kpt's rule: an image named without a registry or path (`set-labels:v0.2`) is the catalog's, `gcr.io/kpt-fn/<name>`. */
function catalogImage(image: string): string {
  return image === '' || image.includes('/') ? image : `gcr.io/kpt-fn/${image}`;
}

type Runner = { kind: 'builtin'; name: string } | { kind: 'container'; command: string } | { kind: 'exec'; path: string };

function chooseRunner(ctx: Context, dir: string, fn: KptFunction, field: string): Runner {
  const name = functionName(fn);
  const where = `${ctx.tree.describe(`${dir}/Kptfile`)}: ${field}`;
  // --runtime chooses how images run; an exec function has only one way to run
  if (fn.exec) {
    return { kind: 'exec', path: execPath(fn.exec, ctx.cwd) };
  }
  const image = catalogImage(fn.image ?? '');
  if (ctx.runtime === 'exec')
    throw new RenderError(
      `${where}: function ${JSON.stringify(name)} is an image and --runtime exec runs only exec: functions`,
      dir,
      name,
      field,
    );
  const builtin = builtinName(image);
  if (ctx.runtime === 'builtin') {
    if (builtin) return { kind: 'builtin', name: builtin };
    throw new RenderError(
      `${where}: function ${JSON.stringify(name)} has no built-in implementation (built-ins: ${Object.keys(BUILTINS).join(', ')})`,
      dir,
      name,
      field,
    );
  }
  const route = imageRoute(ctx, image);
  if (route === 'refused') throw imageRefusal(ctx, dir, ctx.tree.describe(`${dir}/Kptfile`), field, fn, image);
  // an image the user did not allow never reaches the container runtime: its built-in runs
  if (route === 'builtin' && builtin) return { kind: 'builtin', name: builtin };
  if (ctx.containerRuntime === undefined) ctx.containerRuntime = detectContainerRuntime(ctx.env) ?? null;
  if (ctx.containerRuntime !== null) return { kind: 'container', command: ctx.containerRuntime };
  if (ctx.runtime === 'container')
    throw new RenderError(
      `${where}: function ${JSON.stringify(name)} needs a container runtime and neither docker nor podman answers`,
      dir,
      name,
      field,
    );
  if (builtin) return { kind: 'builtin', name: builtin };
  throw new RenderError(
    `${where}: function ${JSON.stringify(name)} cannot run: no container runtime (docker or podman) answers and kdelta has no built-in for it (built-ins: ${Object.keys(BUILTINS).join(', ')})`,
    dir,
    name,
    field,
  );
}

async function runFunction(ctx: Context, dir: string, fn: KptFunction, field: string, items: Item[], mutator: boolean): Promise<Item[]> {
  const name = functionName(fn);
  const runner = chooseRunner(ctx, dir, fn, field);
  const config = functionConfig(ctx, dir, fn, field, items);
  const { selected, unselected } = selectItems(items, fn.selectors, fn.exclude);
  // before the function runs: a built-in edits the resources in place
  const before = ctx.changes && mutator ? snapshot(selected) : undefined;
  const started = performance.now();
  const base = { package: dir, field, ...(fn.image ? { image: fn.image } : { exec: fn.exec ?? '' }), runtime: runner.kind };
  const fail = (exitCode: number, results: readonly KrmResult[], reason: string, stderr?: string): never => {
    ctx.results.push({ ...base, exitCode, results, ...(stderr ? { stderr } : {}), durationMs: performance.now() - started });
    throw new RenderError(
      `${ctx.tree.describe(`${dir}/Kptfile`)}: ${field}: function ${JSON.stringify(name)} failed: ${reason}`,
      dir,
      name,
      field,
    );
  };

  let output: Item[];
  let results: KrmResult[];
  if (runner.kind === 'builtin') {
    const builtin = BUILTINS[runner.name];
    if (!builtin) throw new Error(`built-in ${runner.name} is missing`);
    // built-ins edit in place: hand them copies so a validator cannot change anything
    const input = mutator ? selected : selected.map((i) => ({ ...i, doc: i.doc.clone() }));
    try {
      const out = builtin({ items: input, config });
      output = out.items ?? input;
      results = out.results;
    } catch (error) {
      if (error instanceof BuiltinConfigError) return fail(1, [{ message: error.message, severity: 'error' }], error.message);
      throw error;
    }
    const errors = results.filter((r) => r.severity === 'error');
    if (errors.length > 0) return fail(1, results, errors.map((r) => r.message).join('; '));
  } else {
    const text = encodeResourceList(selected, config, ctx.root);
    const proc =
      runner.kind === 'exec'
        ? await runProcess(runner.path, [], text, { cwd: ctx.cwd, env: functionEnv(ctx.env) })
        : await runProcess(runner.command, containerArgs(catalogImage(fn.image ?? '')), text, { cwd: ctx.cwd, env: definedEnv(ctx.env) });
    // the exec function named as written: its resolved path depends on where the render runs
    if (proc.spawnError !== undefined)
      return fail(1, [], runner.kind === 'exec' ? proc.spawnError.split(runner.path).join(fn.exec ?? runner.path) : proc.spawnError);
    let decoded: { items: Item[]; results: KrmResult[] } | undefined;
    let decodeError: string | undefined;
    try {
      decoded = decodeResourceList(proc.stdout, selected, ctx.root, dir);
    } catch (error) {
      if (!(error instanceof ResourceListError)) throw error;
      decodeError = error.message;
    }
    results = decoded?.results ?? [];
    if (proc.exitCode !== 0) {
      const errors = results.filter((r) => r.severity === 'error').map((r) => r.message);
      const said = errors.length > 0 ? errors.join('; ') : lastLines(proc.stderr);
      return fail(proc.exitCode, results, `exit code ${proc.exitCode}${said ? `: ${said}` : ''}`, proc.stderr);
    }
    if (!decoded) return fail(1, results, decodeError ?? 'no output', proc.stderr);
    output = decoded.items;
  }
  // a validator's output is not used, so only a mutator's is checked
  if (mutator) {
    for (const item of output) {
      // kpt's rule: a path may not climb out of the resource's package (an absolute one is read as relative)
      const path = posix.normalize(item.path.replace(/^\/+/, ''));
      if (path === '..' || path.startsWith('../')) {
        const id = identity(item.doc);
        fail(
          1,
          results,
          `function must not modify resources outside of package: ${id.kind || 'a resource'} ${JSON.stringify(id.name)} has path ${JSON.stringify(item.path)}`,
        );
      }
      item.path = path;
    }
    if (!output.some((i) => i.pkg === dir && i.path === 'Kptfile')) {
      if (selected.some((i) => i.pkg === dir && i.path === 'Kptfile')) fail(1, results, 'it removed the Kptfile of the package');
    }
  }
  const changes = before ? { changes: changesBetween(before, snapshot(output)) } : {};
  ctx.results.push({ ...base, exitCode: 0, results, ...changes, durationMs: performance.now() - started });
  return mutator ? [...unselected, ...output] : items;
}

function lastLines(text: string, n = 5): string {
  return text.trim().split('\n').slice(-n).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Writing the resources back to their files
// ---------------------------------------------------------------------------------------------

function treeFile(pkg: string, path: string): string {
  return pkg === '' ? path : `${pkg}/${path}`;
}

/**
 * The rendered tree: every resource in the file its path annotation names, in index order. A file
 * whose resources did not change keeps its bytes; one whose resources are the same documents in
 * the same order keeps its comments and separators; a file left without resources is deleted.
 */
function layout(tree: PackageTree, root: string, items: readonly Item[]): { next: PackageTree; written: string[]; deleted: string[] } {
  const next = tree.clone();
  const byFile = new Map<string, Item[]>();
  for (const item of items) {
    const f = treeFile(item.pkg, treePath(item.path));
    const list = byFile.get(f);
    if (list) list.push(item);
    else byFile.set(f, [item]);
  }
  // the files the render read resources from, in every package it rendered
  const sources = new Map<string, { pkg: string; count: number }>();
  const packages = renderedPackages(tree, root);
  for (const pkg of packages) {
    const view = tree.package(pkg);
    if (view.hasKptfile()) sources.set(treeFile(pkg, 'Kptfile'), { pkg, count: 1 });
    for (const r of view.resources()) {
      const f = treeFile(pkg, r.file);
      const s = sources.get(f);
      if (s) s.count++;
      else sources.set(f, { pkg, count: 1 });
    }
  }
  const written: string[] = [];
  const deleted: string[] = [];
  for (const f of sources.keys()) {
    if (!byFile.has(f)) {
      next.delete(f);
      deleted.push(f);
    }
  }
  for (const [f, list] of byFile) {
    const ordered = [...list].sort((a, b) => a.index - b.index);
    const original = tree.text(f);
    const indent = sequenceIndent(original ?? ordered.map((i) => i.original ?? '').join('\n'));
    const texts = ordered.map((item) => ({ item, text: itemText(item, indent) }));
    let content: string;
    const source = sources.get(f);
    if (original !== undefined && source !== undefined && keepsOrder(ordered, f, source.count)) {
      const bodies = new Map<number, string | null>();
      const present = new Set<number>();
      const added: string[] = [];
      for (const { item, text } of texts) {
        const from = item.original !== undefined && item.fromFile === f ? item.fromIndex : undefined;
        if (from === undefined) added.push(text);
        else {
          present.add(from);
          if (text !== item.original) bodies.set(from, text);
        }
      }
      for (let k = 0; k < source.count; k++) if (!present.has(k)) bodies.set(k, null);
      content = rebuildYamlFile(original, bodies, added);
    } else content = texts.map((t) => (t.text.endsWith('\n') ? t.text : `${t.text}\n`)).join('---\n');
    if (content !== original) {
      next.write(f, content);
      written.push(f);
    }
  }
  return { next, written: written.sort(), deleted: deleted.sort() };
}

/** Whether a file's resources are still its own documents, in their order (new ones after). */
function keepsOrder(ordered: readonly Item[], file: string, count: number): boolean {
  let last = -1;
  let addedSeen = false;
  for (const item of ordered) {
    const from = item.fromFile === file ? item.fromIndex : undefined;
    if (from === undefined) {
      addedSeen = true;
      continue;
    }
    if (addedSeen || from <= last || from >= count) return false;
    last = from;
  }
  return true;
}

/** The resource's text: its original text while the document prints the same, else as printed. */
function itemText(item: Item, indent: 'compact' | 'wide'): string {
  const now = printItem(item.doc, indent);
  if (item.original === undefined) return now;
  if (now === item.original) return item.original;
  if (item.baseline !== undefined && JSON.stringify(item.doc.toJS()) !== JSON.stringify(item.baseline)) return now;
  return now === printItem(parseResource(item.original), indent) ? item.original : now;
}
