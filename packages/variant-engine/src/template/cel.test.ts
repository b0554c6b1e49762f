import { describe, expect, it } from 'vitest';
import { CEL_BUDGET, evalExpr, type CelVariables } from './cel.js';

const vars: CelVariables = {
  repoDefault: 'repo',
  packageDefault: 'pkg',
  target: { name: 'east', namespace: 'default', labels: { env: 'prod' }, annotations: null },
};
const thousand = `[${Array.from({ length: 1000 }, (_, i) => i).join(', ')}]`;

describe('the CEL budget', () => {
  it('stops nested comprehensions early, with the reason (they took a gigabyte, one level more crashed Node)', () => {
    const r = evalExpr(`string(size(${thousand}.map(a, ${thousand}.map(b, ${thousand}.map(c, c)))))`, vars);
    expect(r).toEqual({
      ok: false,
      error: `CEL cost budget exceeded: more than ${CEL_BUDGET.maxCost} evaluation steps: the expression does too much work`,
    });
  });

  it('stops exists/all, which go on past the errors of their steps', () => {
    const r = evalExpr(`string(${thousand}.exists(a, ${thousand}.exists(b, ${thousand}.exists(c, c < 0))))`, vars);
    expect(!r.ok && r.error).toMatch(/^CEL cost budget exceeded/);
  });

  it('bounds sizes that grow without iterating: a list doubled by cel.bind, a string doubled', () => {
    const doubling = (name: string, depth: number, seed: string, last: string): string => {
      let expr = last.replace('$', `${name}${depth}`);
      for (let i = depth; i > 0; i--) expr = `cel.bind(${name}${i}, ${i === 1 ? seed : `${name}${i - 1} + ${name}${i - 1}`}, ${expr})`;
      return expr;
    };
    const list = evalExpr(doubling('l', 24, '[1, 2]', 'string(size($))'), vars);
    expect(!list.ok && list.error).toBe(
      `CEL size budget exceeded: a list or map of more than ${CEL_BUDGET.maxCollectionSize} entries: the expression does too much work`,
    );
    const text = evalExpr(doubling('s', 24, "'ab'", 'string(size($))'), vars);
    expect(!text.ok && text.error).toMatch(/^CEL size budget exceeded: a string of more than \d+ characters/);
  });

  it('leaves ordinary templates alone, comprehensions over a target included', () => {
    expect(evalExpr("target.name + '-' + packageDefault", vars)).toEqual({ ok: true, value: 'east-pkg' });
    expect(evalExpr("target.labels.map(k, k + '=' + target.labels[k]).join(',')", vars)).toEqual({ ok: true, value: 'env=prod' });
    expect(evalExpr(`string(size(${thousand}.map(a, a * 2)))`, vars)).toEqual({ ok: true, value: '1000' });
    // each evaluation has its own budget: three of about half of it each
    const hundred = `[${Array.from({ length: 100 }, (_, i) => i).join(', ')}]`;
    for (let i = 0; i < 3; i++) {
      expect(evalExpr(`string(size(${hundred}.map(a, ${hundred}.filter(b, b < 20))))`, vars)).toEqual({ ok: true, value: '100' });
    }
  });
});
