import { describe, expect, it } from 'vitest';
import { InputError } from './inputs.js';
import { isPreview, previewPlan, workflowEvent } from './preview-inputs.js';

const inputs =
  (values: Record<string, string>) =>
  (name: string): string =>
    values[name] ?? '';

const prEvent = workflowEvent(
  { GITHUB_EVENT_NAME: 'pull_request', GITHUB_REPOSITORY: 'org/catalog' },
  { pull_request: { number: 7, head: { sha: 'a'.repeat(40) } } },
);
const where = { serverUrl: 'https://github.com' };

describe('the Action previews', () => {
  it('with mode preview, and by default on a pull request event; a run mode runs', () => {
    const push = workflowEvent({ GITHUB_EVENT_NAME: 'push', GITHUB_REPOSITORY: 'org/fleet' }, {});
    expect(isPreview(inputs({ mode: 'preview' }), push)).toBe(true);
    expect(isPreview(inputs({}), push)).toBe(false);
    expect(isPreview(inputs({}), prEvent)).toBe(true);
    expect(isPreview(inputs({ mode: 'variants' }), prEvent)).toBe(false);
  });

  it("a pull request of another repository than the workspace's is that upstream's change, at its head commit", () => {
    expect(previewPlan(inputs({}), prEvent, { ...where, workspaceRepository: 'https://github.com/org/fleet' })).toEqual({
      upstream: 'https://github.com/org/catalog',
      upstreamRef: 'a'.repeat(40),
      comment: { repository: 'org/catalog', number: 7 },
    });
  });

  it("a pull request of the workspace's own repository previews its control resources", () => {
    expect(
      previewPlan(inputs({}), prEvent, { ...where, workspaceRepository: 'https://x-access-token:t@github.com/Org/Catalog.git' }),
    ).toEqual({
      comment: { repository: 'org/catalog', number: 7 },
    });
  });

  it('inputs upstream and upstream-ref say what to preview; upstream alone is an error naming it', () => {
    expect(previewPlan(inputs({ upstream: 'catalog', 'upstream-ref': 'refs/pull/7/head' }), prEvent, where)).toEqual({
      upstream: 'catalog',
      upstreamRef: 'refs/pull/7/head',
      comment: { repository: 'org/catalog', number: 7 },
    });
    const push = workflowEvent({ GITHUB_EVENT_NAME: 'workflow_dispatch', GITHUB_REPOSITORY: 'org/fleet' }, {});
    expect(() => previewPlan(inputs({ upstream: 'catalog' }), push, where)).toThrow(InputError);
    expect(() => previewPlan(inputs({ upstream: 'catalog' }), push, where)).toThrow(
      /input "upstream": names the Repository of input "upstream-ref"/,
    );
  });
});
