import { describe, expect, it } from 'vitest';
import { InputError, settingsFromInputs } from './inputs.js';
import { isPreview, previewConnection, previewPlan, workflowEvent } from './preview-inputs.js';

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

describe('the preview of an upstream on a GitHub Enterprise Server, its downstreams on github.com', () => {
  const ghes = 'https://ghes.example.com';
  const ctx = { workspace: '/runner/ws/fleet', env: { GITHUB_SERVER_URL: ghes, GITHUB_API_URL: `${ghes}/api/v3` } };
  const read = (values: Record<string, string>) => {
    const input = inputs({ token: 'ghes-workflow', ...values });
    return previewConnection(input, settingsFromInputs(input, ctx), ghes);
  };

  it('reads the downstreams on github.com with its server-tokens line, and the upstream on the GHES with the workflow token', () => {
    const s = read({ 'downstream-server': 'https://github.com', 'server-tokens': 'https://github.com=gh-reader' });
    expect(s.options.github).toEqual({
      token: 'gh-reader',
      tokenName: 'the server-tokens line for https://github.com',
      serverUrl: 'https://github.com',
      apiUrl: 'https://api.github.com',
      graphqlUrl: 'https://api.github.com/graphql',
    });
    expect(s.options.settings.values.serverTokens).toEqual([
      { server: 'https://github.com', token: 'gh-reader' },
      { server: ghes, token: 'ghes-workflow' },
    ]);
    // the comment on the reviewed pull request stays the workflow's
    expect(s.token).toBe('ghes-workflow');
  });

  it.each([
    [{}, 'unset'],
    [{ 'downstream-server': `${ghes}/` }, 'the workflow’s own server'],
  ])('leaves the connection as it is when the downstream server is %j (%s)', (values, _why) => {
    const input = inputs({ token: 'ghes-workflow', ...values });
    const before = settingsFromInputs(input, ctx);
    expect(previewConnection(input, before, ghes)).toBe(before);
  });

  it.each([
    [
      { 'downstream-server': 'https://github.com' },
      'the downstreams on https://github.com are read with a token for that server: add a line "https://github.com=<token>" to input server-tokens',
    ],
    [{ 'downstream-server': 'github.com' }, 'expected the downstreams\' GitHub, https://host (got "github.com")'],
    [
      { 'downstream-server': 'https://github.com/org' },
      'expected the downstreams\' GitHub, https://host without a path (got "https://github.com/org")',
    ],
  ])('refuses %j naming the input', (values, message) => {
    expect(() => read(values)).toThrow(new InputError('downstream-server', message));
  });
});
