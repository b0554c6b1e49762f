import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import type { KubeObject, StringMap } from '../api/types.js';

/**
 * The CEL environment of PackageVariantSet templates (Porch's `evalExpr`): the variables
 * `repoDefault` and `packageDefault` (strings), `upstream`, `repository` and `target` (dyn), the
 * standard library only. `repository` is absent from the environment of `downstream.repoExpr`,
 * since the downstream Repository is only known once that expression has been evaluated.
 *
 * Errors are values, never thrown. Messages use cel-go's words for the cases Porch users see
 * (`undeclared reference to 'x'`, `Syntax error: ...`, `no such key: k`) with the position.
 */

/** `{name, namespace, labels, annotations}`: the only fields of an object a template can read. */
export interface ObjectProjection {
  readonly name: string;
  readonly namespace: string;
  readonly labels: StringMap | null;
  readonly annotations: StringMap | null;
}

export interface CelVariables {
  readonly repoDefault: string;
  readonly packageDefault: string;
  readonly upstream?: ObjectProjection | null;
  readonly repository?: ObjectProjection | null;
  /** `{repo, package}` for `repositories` targets, else the selected object's projection. */
  readonly target?: ObjectProjection | { readonly repo: string; readonly package: string } | null;
}

export type CelResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export function projectObject(obj: KubeObject | undefined | null): ObjectProjection | null {
  if (!obj) return null;
  const m = obj.metadata ?? {};
  const nonEmpty = (x: StringMap | undefined) => (x && Object.keys(x).length > 0 ? x : null);
  return { name: m.name ?? '', namespace: m.namespace ?? '', labels: nonEmpty(m.labels), annotations: nonEmpty(m.annotations) };
}

function baseEnvironment(withRepository: boolean): Environment {
  const env = new Environment({ homogeneousAggregateLiterals: true })
    .registerVariable('repoDefault', 'string')
    .registerVariable('packageDefault', 'string')
    .registerVariable('upstream', 'dyn')
    .registerVariable('target', 'dyn');
  return withRepository ? env.registerVariable('repository', 'dyn') : env;
}

const environments = { full: baseEnvironment(true), repoExpr: baseEnvironment(false) };

export type CelScope = keyof typeof environments;

interface CelErrorLike {
  readonly name?: string;
  readonly code?: string;
  readonly summary?: string;
  readonly message?: string;
  readonly range?: { readonly start: number };
  readonly node?: { readonly pos?: number; readonly start?: number };
}

function position(source: string, offset: number | undefined): string {
  const at = Math.max(0, Math.min(offset ?? 0, source.length));
  const before = source.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1) + 1;
  return `${line}:${column}`;
}

/** One line, cel-go's words where Porch users know them, with the position in the expression. */
export function describeCelError(source: string, error: unknown): string {
  const e = (error ?? {}) as CelErrorLike;
  const summary = e.summary ?? (e.message ?? String(error)).split('\n')[0] ?? '';
  const offset = e.range?.start ?? e.node?.start ?? e.node?.pos;
  const at = position(source, offset);
  let text = summary;
  let match: RegExpExecArray | null;
  if (e.code === 'unknown_variable') {
    const name = /Unknown variable: (.*)$/.exec(summary)?.[1] ?? summary;
    text = `undeclared reference to '${name}'`;
  } else if ((match = /^No such key: (.*)$/.exec(summary))) {
    text = `no such key: ${match[1]}`;
  } else if (e.name === 'ParseError') {
    text = `Syntax error: ${summary}`;
  }
  return `ERROR: <input>:${at}: ${text}`;
}

export interface CompiledExpr {
  readonly source: string;
  readonly scope: CelScope;
  readonly run: ParseResult;
  /** The type the checker inferred (`string`, `dyn`, ...). */
  readonly type: string;
}

/**
 * What one evaluation may spend. cel-js bounds only the parsed expression (its AST nodes, depth
 * and literal sizes), not the work: nested comprehensions over a 1,000-element literal took a
 * gigabyte and ten seconds, one level more crashed Node. So every AST node evaluated costs 1, and
 * every value produced is bounded in size, so time and memory stay small whatever the template
 * does. A template computes a name or a label from a few fields: tens of steps; 100,000 leaves
 * room for comprehensions over a target's labels and stops a runaway within a fraction of a second.
 */
export const CEL_BUDGET = {
  /** AST nodes evaluated, comprehension steps included. */
  maxCost: 100_000,
  /** Characters of any string made along the way (a name or label value needs far fewer). */
  maxStringLength: 1 << 20,
  /** Elements of any list or entries of any map made along the way. */
  maxCollectionSize: 100_000,
} as const;

class CelBudgetExceeded extends Error {}

/**
 * The budget of the evaluation in progress (evaluation is synchronous: one at a time). Once
 * exceeded, the same error is thrown again at every step: `exists` and `all` catch the errors of
 * their steps and go on, and a new error (with its stack) each time would be slow.
 */
let spent: { cost: number; exceeded?: CelBudgetExceeded } | undefined;

function exceed(reason: string): never {
  spent!.exceeded ??= new CelBudgetExceeded(reason);
  throw spent!.exceeded;
}

function charge(value: unknown): void {
  if (spent === undefined) return;
  if (spent.exceeded) throw spent.exceeded;
  if (++spent.cost > CEL_BUDGET.maxCost) exceed(`cost budget exceeded: more than ${CEL_BUDGET.maxCost} evaluation steps`);
  if (typeof value === 'string') {
    if (value.length > CEL_BUDGET.maxStringLength) {
      exceed(`size budget exceeded: a string of more than ${CEL_BUDGET.maxStringLength} characters`);
    }
  } else if (value !== null && typeof value === 'object') {
    const size = Array.isArray(value) ? value.length : value instanceof Map ? value.size : undefined;
    if (size !== undefined && size > CEL_BUDGET.maxCollectionSize) {
      exceed(`size budget exceeded: a list or map of more than ${CEL_BUDGET.maxCollectionSize} entries`);
    }
  }
}

interface AstNodeLike {
  readonly meta: { evaluate?: (...args: unknown[]) => unknown; alternate?: unknown; macro?: unknown };
  readonly args: unknown;
}

const isAstNode = (x: unknown): x is AstNodeLike =>
  typeof x === 'object' && x !== null && 'meta' in x && typeof (x as AstNodeLike).meta === 'object' && 'args' in x;

/**
 * Makes every node of a parsed expression charge the budget when it is evaluated: each node's
 * evaluation function (cel-js keeps it in the node's `meta` and calls it on first use) is wrapped,
 * in the tree, in macro expansions (`map`, `filter`, `all`, `exists`) and in `cel.bind`.
 */
function meter(root: unknown): void {
  const seen = new Set<unknown>();
  const walk = (x: unknown): void => {
    if (typeof x !== 'object' || x === null || seen.has(x)) return;
    seen.add(x);
    if (Array.isArray(x)) {
      for (const item of x) walk(item);
      return;
    }
    if (!isAstNode(x)) {
      // comprehension arguments and macro records: plain objects holding nodes
      if (Object.getPrototypeOf(x) === Object.prototype) for (const v of Object.values(x)) walk(v);
      return;
    }
    const meta = x.meta;
    const evaluate = meta.evaluate;
    if (typeof evaluate === 'function') {
      meta.evaluate = function (this: unknown, ...args: unknown[]) {
        if (spent?.exceeded) throw spent.exceeded;
        const value = evaluate.apply(this, args);
        charge(value);
        return value;
      };
    }
    walk(x.args);
    walk(meta.alternate);
    walk(meta.macro);
  };
  walk(root);
}

const cache = new Map<string, CelResult<CompiledExpr>>();

/**
 * Parse and type-check an expression once (results are cached by scope and text): syntax
 * errors, unknown variables and a result type that can never be a string fail here,
 * before any target is evaluated.
 */
export function compileExpr(source: string, scope: CelScope = 'full'): CelResult<CompiledExpr> {
  const key = `${scope}\u0000${source}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const result = compileUncached(source, scope);
  if (cache.size > 10_000) cache.clear();
  cache.set(key, result);
  return result;
}

function compileUncached(source: string, scope: CelScope): CelResult<CompiledExpr> {
  const env = environments[scope];
  let run: ParseResult;
  try {
    run = env.parse(source);
  } catch (error) {
    return { ok: false, error: describeCelError(source, error) };
  }
  let checked;
  try {
    checked = env.check(source);
  } catch (error) {
    return { ok: false, error: describeCelError(source, error) };
  }
  if (!checked.valid) return { ok: false, error: describeCelError(source, checked.error) };
  meter((run as { ast?: unknown }).ast);
  const type = checked.type ?? 'dyn';
  if (type !== 'string' && type !== 'dyn') {
    return { ok: false, error: `expression must evaluate to a string, but its type is ${type} (convert it with string(...))` };
  }
  return { ok: true, value: { source, scope, run, type } };
}

function typeOfValue(v: unknown): string {
  if (v === null || v === undefined) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Uint8Array) return 'bytes';
  if (typeof v === 'object') return 'map';
  return typeof v;
}

/** Evaluate a compiled expression; the result must be a CEL string. */
export function evaluateCompiled(expr: CompiledExpr, vars: CelVariables): CelResult<string> {
  const context: Record<string, unknown> = {
    repoDefault: vars.repoDefault,
    packageDefault: vars.packageDefault,
    upstream: vars.upstream ?? null,
    target: vars.target ?? null,
  };
  if (expr.scope === 'full') context.repository = vars.repository ?? null;
  let value: unknown;
  spent = { cost: 0 };
  try {
    value = expr.run(context);
  } catch (error) {
    const exceeded = spent?.exceeded ?? (error instanceof CelBudgetExceeded ? error : undefined);
    if (exceeded) return { ok: false, error: `CEL ${exceeded.message}: the expression does too much work` };
    return { ok: false, error: describeCelError(expr.source, error) };
  } finally {
    spent = undefined;
  }
  if (typeof value !== 'string') {
    return {
      ok: false,
      error: `expression must evaluate to a string, got ${typeOfValue(value)} (convert it with string(...))`,
    };
  }
  return { ok: true, value };
}

/** Compile (cached) and evaluate: Porch's `evalExpr`. */
export function evalExpr(source: string, vars: CelVariables, scope: CelScope = 'full'): CelResult<string> {
  const compiled = compileExpr(source, scope);
  const result = compiled.ok ? evaluateCompiled(compiled.value, vars) : compiled;
  if (result.ok) return result;
  const missing = missingKeyOwners(source, result.error, vars);
  return missing ? { ok: false, error: `${result.error} (${missing})` } : result;
}

const OWNER_WORDS = { repository: 'Repository', target: 'target', upstream: 'upstream package' } as const;

/**
 * `no such key: region` says which key, not whose: the objects the expression reads labels or
 * annotations of that lack the key (`Repository "cluster-02" has no label "region"`), so a user
 * fixes that object rather than the template.
 */
function missingKeyOwners(source: string, error: string, vars: CelVariables): string | undefined {
  const key = /no such key: (.+)$/.exec(error)?.[1];
  if (key === undefined) return undefined;
  const out: string[] = [];
  for (const variable of ['repository', 'target', 'upstream'] as const) {
    const value = vars[variable];
    if (!value || !('labels' in value)) continue;
    for (const field of ['labels', 'annotations'] as const) {
      if (!new RegExp(`\\b${variable}\\s*\\.\\s*${field}\\b`).test(source)) continue;
      if (value[field]?.[key] !== undefined) continue;
      out.push(`${OWNER_WORDS[variable]} "${value.name}" has no ${field === 'labels' ? 'label' : 'annotation'} "${key}"`);
    }
  }
  return out.length > 0 ? out.join('; ') : undefined;
}
