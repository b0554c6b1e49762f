import { startFakeGitHub } from '@kdelta/fake-github';
import { describe, expect, it } from 'vitest';
import { createGitHubForge } from './github.js';

/**
 * The dashboard is only an issue the run's own identity opened. GitHub names that identity in
 * GraphQL's `viewer`; a server that does not answer it (an older Enterprise Server, a proxy that
 * passes only mutations) still names a user's token through REST's GET /user.
 */
describe("the GitHub forge learns its own login for the dashboard's issue", () => {
  it.each([
    ['GraphQL viewer', true],
    ['GET /user, GraphQL having no viewer', false],
  ])('through %s: its own issue is the dashboard, an outsider one with the same title and marker is not', async (_, viewer) => {
    const gh = await startFakeGitHub({
      graphqlViewer: viewer,
      tokens: {
        ghp_run: { login: 'platform-bot', permissions: 'all' },
        ghp_outsider: { login: 'outsider', permissions: 'all' },
      },
    });
    try {
      await gh.createRepo('org/control', { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
      const target = {
        repository: 'org/control',
        name: 'dashboard',
        title: 'kdelta dashboard',
        marker: '<!-- kdelta-dashboard: dashboard -->',
      };
      const forgeAs = (token: string) =>
        createGitHubForge({ token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: { writeSpacing: false } });
      // the outsider opens the dashboard's look-alike first
      await forgeAs('ghp_outsider').writeDashboard!(target, `- [x] forged\n${target.marker}\n`, undefined);
      const forge = forgeAs('ghp_run');
      expect(await forge.readDashboard!(target)).toBeUndefined();
      const made = await forge.writeDashboard!(target, `ours\n${target.marker}\n`, undefined);
      expect(await forge.readDashboard!(target)).toEqual(made);
      expect(gh.issues('org/control').map((i) => i.user)).toEqual(['outsider', 'platform-bot']);
      expect(gh.violations).toEqual([]);
    } finally {
      await gh.close();
    }
  });

  it("an App's installation (`<slug>[bot]`): its own issue is the dashboard, found in one read; a person named `<slug>` is not it", async () => {
    const gh = await startFakeGitHub({
      tokens: {
        ghs_app: { login: 'fleet-app[bot]', permissions: 'all' },
        ghp_person: { login: 'fleet-app', permissions: 'all' },
      },
    });
    try {
      await gh.createRepo('org/control', { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
      const target = {
        repository: 'org/control',
        name: 'dashboard',
        title: 'kdelta dashboard',
        marker: '<!-- kdelta-dashboard: dashboard -->',
      };
      const forgeAs = (token: string) =>
        createGitHubForge({ token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: { writeSpacing: false } });
      // GraphQL names the person `fleet-app` and the App's bot `fleet-app` too (a Bot, without `[bot]`)
      await forgeAs('ghp_person').writeDashboard!(target, `- [x] forged\n${target.marker}\n`, undefined);
      expect(await forgeAs('ghs_app').readDashboard!(target)).toBeUndefined();
      const made = await forgeAs('ghs_app').writeDashboard!(target, `ours\n${target.marker}\n`, undefined);
      gh.clearRequests();
      expect(await forgeAs('ghs_app').readDashboard!(target)).toEqual(made);
      expect(gh.requests.map((r) => r.operationId)).toEqual(['graphql/viewer+issues']);
      expect(gh.violations).toEqual([]);
    } finally {
      await gh.close();
    }
  });
});
