import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** One operation of GitHub's REST API that the fake serves, with its validators. */
export interface Operation {
  readonly operationId: string;
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly pathParams: readonly string[];
  validateParams(path: Record<string, string>, query: Record<string, string>): string | undefined;
  validateBody(body: unknown): string | undefined;
  /** undefined when the body fits the response schema for that status (or the status has no JSON schema). */
  validateResponse(status: number, body: unknown): string | undefined;
}

const SUBSET_URL = new URL('../openapi/subset.json', import.meta.url);
const DOC_ID = 'https://kdelta.invalid/github-openapi-subset.json';

let cached: Operation[] | undefined;

/** The operations of openapi/subset.json (a trimmed copy of GitHub's official description). */
export function loadOperations(): Operation[] {
  if (cached) return cached;
  const doc = JSON.parse(readFileSync(SUBSET_URL, 'utf8')) as JsonObject;
  const components = doc['components'] as JsonObject;
  // Query and path values arrive as strings: a second instance coerces them to the schema's types.
  const bodies = newAjv(false, components);
  const params = newAjv(true, components);
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc['paths'] as JsonObject)) {
    for (const [method, raw] of Object.entries(item as JsonObject)) {
      ops.push(makeOperation(template, method.toUpperCase(), raw as JsonObject, components, bodies, params));
    }
  }
  // Literal segments win over parameters (as GitHub routes `git/ref/x` before anything looser).
  ops.sort((a, b) => literalLength(b.template) - literalLength(a.template));
  cached = ops;
  return ops;
}

function literalLength(template: string): number {
  return template.replace(/\{[^}]+\}/g, '').length;
}

function newAjv(coerce: boolean, components: JsonObject): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false, coerceTypes: coerce, useDefaults: false, validateFormats: true });
  addFormats(ajv);
  for (const f of ['repo.nwo', 'int64', 'int32', 'binary', 'byte', 'ssh-key']) ajv.addFormat(f, true);
  ajv.addSchema({ $id: DOC_ID, components: toJsonSchema(components) } as object);
  return ajv;
}

/**
 * OpenAPI 3.0 schemas → JSON Schema: `nullable: true` becomes a null alternative, and `#/components/...`
 * references point into the document registered under DOC_ID.
 */
function toJsonSchema(node: Json, parentKey = ''): Json {
  if (Array.isArray(node)) return node.map((v) => toJsonSchema(v));
  if (!node || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && parentKey !== 'properties') out[k] = DOC_ID + v;
    else if (k === 'nullable' && parentKey !== 'properties') continue;
    else out[k] = toJsonSchema(v, k);
  }
  if (parentKey !== 'properties' && node['nullable'] === true) {
    if (Array.isArray(out['enum']) && !out['enum'].includes(null)) out['enum'] = [...out['enum'], null];
    if (typeof out['type'] === 'string' && !out['$ref'] && !out['allOf'] && !out['oneOf'] && !out['anyOf']) {
      out['type'] = [out['type'], 'null'];
      return out;
    }
    return { anyOf: [{ type: 'null' }, out] };
  }
  return out;
}

function resolve(node: Json | undefined, components: JsonObject): JsonObject | undefined {
  let cur = node;
  for (let i = 0; i < 10 && cur && typeof cur === 'object' && !Array.isArray(cur) && typeof cur['$ref'] === 'string'; i++) {
    const [, , kind, name] = (cur['$ref'] as string).split('/');
    cur = (components[kind!] as JsonObject | undefined)?.[name!];
  }
  return cur && typeof cur === 'object' && !Array.isArray(cur) ? cur : undefined;
}

function describe(fn: ValidateFunction, what: string): string {
  const e = fn.errors?.[0];
  if (!e) return `${what} is invalid`;
  const at = e.instancePath || '(root)';
  const extra = e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : '';
  return `${what} ${at} ${e.message ?? 'is invalid'}${extra}`;
}

function makeOperation(template: string, method: string, raw: JsonObject, components: JsonObject, bodies: Ajv, params: Ajv): Operation {
  const operationId = raw['operationId'] as string;
  const parameters = ((raw['parameters'] as Json[] | undefined) ?? []).map((p) => resolve(p, components)!);
  const pathParams: string[] = [];
  const source = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    pathParams.push(name);
    // GitHub accepts refs and branch names with slashes here (`git/ref/heads/a/b`, `commits/a/b/status`).
    return name === 'ref' || name === 'branch' ? '(.+)' : '([^/]+)';
  });
  const pattern = new RegExp('^' + source + '/?$');

  const objectSchema = (where: string) => {
    const props: JsonObject = {};
    const required: string[] = [];
    for (const p of parameters.filter((x) => x['in'] === where)) {
      props[p['name'] as string] = toJsonSchema((p['schema'] as Json) ?? {});
      if (p['required'] === true) required.push(p['name'] as string);
    }
    return { type: 'object', properties: props, required };
  };
  const pathFn = params.compile(objectSchema('path'));
  const queryFn = params.compile(objectSchema('query'));

  const requestBody = resolve(raw['requestBody'], components);
  const bodySchema = (requestBody?.['content'] as JsonObject | undefined)?.['application/json'] as JsonObject | undefined;
  const bodyFn = bodySchema ? bodies.compile(toJsonSchema(bodySchema['schema'] as Json) as object) : undefined;
  const bodyRequired = requestBody?.['required'] === true;

  const responseFns = new Map<string, ValidateFunction | null>();
  const responses = (raw['responses'] as JsonObject | undefined) ?? {};
  const responseFn = (status: number): ValidateFunction | null => {
    const key = String(status) in responses ? String(status) : 'default' in responses ? 'default' : undefined;
    if (key === undefined) return null;
    if (!responseFns.has(key)) {
      const r = resolve(responses[key], components);
      const media = (r?.['content'] as JsonObject | undefined)?.['application/json'] as JsonObject | undefined;
      responseFns.set(key, media?.['schema'] ? bodies.compile(toJsonSchema(media['schema']) as object) : null);
    }
    return responseFns.get(key)!;
  };

  return {
    operationId,
    method,
    template,
    pattern,
    pathParams,
    validateParams(path, query) {
      // Copies: the coercing validator rewrites values in place.
      if (!pathFn({ ...path })) return describe(pathFn, 'path parameter');
      if (!queryFn({ ...query })) return describe(queryFn, 'query parameter');
      return undefined;
    },
    validateBody(body) {
      if (!bodyFn) return undefined;
      if (body === undefined) return bodyRequired ? 'request body is required' : undefined;
      return bodyFn(body) ? undefined : describe(bodyFn, 'request body');
    },
    validateResponse(status, body) {
      if (!(String(status) in responses)) {
        // An undocumented status is a fault of the fake only for success codes; GitHub sends 401/403/404 anywhere.
        return status < 300 ? `status ${status} is not a documented response of ${operationId}` : undefined;
      }
      const fn = responseFn(status);
      if (!fn) return undefined;
      return fn(body) ? undefined : describe(fn, `response ${status} body`);
    },
  };
}

/** The operation a request matches, with its decoded path parameters. */
export function matchOperation(
  ops: readonly Operation[],
  method: string,
  path: string,
): { op: Operation; params: Record<string, string> } | { allowed: string[] } | undefined {
  const allowed: string[] = [];
  for (const op of ops) {
    const m = op.pattern.exec(path);
    if (!m) continue;
    if (op.method !== method) {
      allowed.push(op.method);
      continue;
    }
    const params: Record<string, string> = {};
    op.pathParams.forEach((name, i) => {
      params[name] = decodeURIComponent(m[i + 1]!);
    });
    return { op, params };
  }
  return allowed.length ? { allowed } : undefined;
}
