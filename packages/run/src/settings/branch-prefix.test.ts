import { describe, expect, it } from 'vitest';
import { branchPrefixProblem } from './branch-prefix.js';

describe('branchPrefixProblem (the one rule of --branch-prefix, spec.branchPrefix and the Action input)', () => {
  it('accepts the usual prefixes', () => {
    for (const p of ['kdelta/', 'fleet/prod-', 'team_a.kdelta/', 'k']) expect(branchPrefixProblem(p)).toBeUndefined();
  });

  it('refuses an empty prefix, saying why: a variant could then name the base branch', () => {
    expect(branchPrefixProblem('')).toMatch(/^must not be empty: .*bypass review/);
  });

  it('refuses what git would not take as the start of a branch name', () => {
    for (const p of ['/x', '-x/', '.x/', 'a..b/', 'a//b', 'a/.b/', 'a.lock/', 'a b/', 'a~1/', 'a:b/', 'a@{1}/']) {
      expect(branchPrefixProblem(p), p).toBeDefined();
    }
  });
});
