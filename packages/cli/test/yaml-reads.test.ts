// Every YAML read of kdelta goes through merge-core's `parseYamlStream`/`parseYamlDocument`
// (packages/merge-core/src/yaml/parse.ts): YAML 1.1 as Kubernetes reads it, and a duplicate-key
// check in one pass instead of `yaml`'s own, whose cost grows with the square of a map's keys (a
// ConfigMap of 40,000 keys took minutes). So no shipped source may call `yaml`'s parsers itself.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const SHARED_PARSER = 'packages/merge-core/src/yaml/parse.ts';
// Test-only packages: they read the tests' expected files, never a package kdelta works on.
const TEST_ONLY = new Set(['test-support', 'fake-github']);
const PARSERS = new Set(['parse', 'parseDocument', 'parseAllDocuments', 'Parser', 'Composer', 'Lexer']);
// `import { a, b as c } from 'yaml'`, `import * as Y from 'yaml'`, `import Y from 'yaml'`
const YAML_IMPORT = /\bimport\s+(type\s+)?([^'";]*?)\s+from\s*['"]yaml['"]/g;

function shippedSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === '__fixtures__') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...shippedSources(path));
    else if (/\.[cm]?[jt]s$/.test(entry.name) && !/\.(test|d)\.[cm]?ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** The `yaml` parsers a source imports (namespace and default imports count as all of them). */
export function yamlParsersImported(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(YAML_IMPORT)) {
    if (m[1]) continue;
    const clause = m[2]!.trim();
    const named = /\{([^}]*)\}/.exec(clause);
    const whole = clause
      .replace(/\{[^}]*\}/, '')
      .trim()
      .replace(/,$/, '')
      .trim();
    if (whole !== '') found.push(whole);
    for (const part of (named?.[1] ?? '').split(',')) {
      const p = part.trim();
      if (p.startsWith('type ')) continue;
      const name = p.split(/\s+as\s+/)[0]!;
      if (PARSERS.has(name)) found.push(name);
    }
  }
  return found;
}

describe('YAML reads', () => {
  it('the check sees named, renamed, namespace and default imports of yaml parsers, not types or printers', () => {
    expect(yamlParsersImported("import { parseAllDocuments, type Document } from 'yaml';")).toEqual(['parseAllDocuments']);
    expect(yamlParsersImported("import { isMap, parse as p } from 'yaml';")).toEqual(['parse']);
    expect(yamlParsersImported("import * as YAML from 'yaml';")).toEqual(['* as YAML']);
    expect(yamlParsersImported("import YAML from 'yaml';")).toEqual(['YAML']);
    expect(yamlParsersImported("import { stringify, type Document } from 'yaml';")).toEqual([]);
    expect(yamlParsersImported("import type { Document } from 'yaml';")).toEqual([]);
  });

  it("every package reads YAML through merge-core's shared parser, never yaml's own", () => {
    const offenders: string[] = [];
    for (const pkg of readdirSync(join(root, 'packages'))) {
      if (TEST_ONLY.has(pkg)) continue;
      let files: string[];
      try {
        files = shippedSources(join(root, 'packages', pkg, 'src'));
      } catch {
        continue;
      }
      for (const file of files) {
        const rel = relative(root, file).split(sep).join('/');
        if (rel === SHARED_PARSER) continue;
        const parsers = yamlParsersImported(readFileSync(file, 'utf8'));
        if (parsers.length > 0) offenders.push(`${rel}: ${parsers.join(', ')}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
