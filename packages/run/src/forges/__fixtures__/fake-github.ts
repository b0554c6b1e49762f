import { startFakeGitHub, type FakeGitHub } from '@kdelta/fake-github';
import { afterEach, expect } from 'vitest';

/**
 * The fake GitHubs of one test file: `fake(options)` starts one holding `org/cluster-01` (and
 * whatever `prepare` adds); after each test every one started is checked to have seen no request
 * GitHub's OpenAPI description refuses, then closed. Call at the top of the file.
 */
export function fakeGitHubs(
  prepare: (gh: FakeGitHub) => Promise<unknown> = async () => undefined,
): (options?: Parameters<typeof startFakeGitHub>[0]) => Promise<FakeGitHub> {
  const fakes: FakeGitHub[] = [];
  afterEach(async () => {
    for (const gh of fakes.splice(0)) {
      expect(gh.violations).toEqual([]);
      await gh.close();
    }
  });
  return async (options = {}) => {
    const gh = await startFakeGitHub(options);
    fakes.push(gh);
    await gh.createRepo('org/cluster-01', { defaultBranch: 'main' });
    await prepare(gh);
    return gh;
  };
}
