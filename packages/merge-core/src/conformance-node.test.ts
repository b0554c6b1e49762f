// Conformance: kyaml's merge3 test tables (kubernetes-sigs/kustomize kyaml/yaml/merge3, Apache-2.0),
// transcribed into src/__fixtures__/conformance/kyaml-*.yaml with their source and licence.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { merge3Text } from './value.js';

interface NodeCase {
  id: string;
  name: string;
  kind: string;
  options?: { inferAssociativeLists?: boolean };
  original: string;
  updated: string;
  local: string;
  expected: string;
  skip?: string;
  'kdelta-skip'?: string;
}

const files = ['kyaml-scalar.yaml', 'kyaml-list.yaml', 'kyaml-map.yaml', 'kyaml-element.yaml', 'kyaml-kustomization.yaml'];

for (const file of files) {
  const suite = parse(readFileSync(new URL(`./__fixtures__/conformance/${file}`, import.meta.url), 'utf8')) as { cases: NodeCase[] };
  describe(file, () => {
    for (const c of suite.cases.filter((x) => x.kind === 'node')) {
      const reason = c['kdelta-skip'];
      (reason ? test.skip : test)(`${c.id} ${c.name}${reason ? ` — not followed: ${reason}` : ''}`, () => {
        const result = merge3Text(
          { origin: c.original, upstream: c.updated, local: c.local },
          { rules: 'kyaml', inferKeys: c.options?.inferAssociativeLists ?? false },
        );
        expect(result.text.trim()).toBe(c.expected.trim());
      });
    }
  });
}
