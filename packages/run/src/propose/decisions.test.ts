import type { Conflict } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import type { Prepared } from '../jobs/change.js';
import { applyDecisions, decisionsMessage } from './decisions.js';
import { conflictChoice } from './proposal-body.js';
import type { Workspace } from './workspace.js';

// The decisions alone, on a package in memory: the run applies them the same way over real git
// on both forges (packages/run/test/scenarios/conflict-ticks.test.ts).

const deploy = (replicas: number) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  paused: false\n`;

/** Only what the decisions use of a workspace: one package's text files. */
function files(initial: Record<string, string>): { ws: Workspace; files: Map<string, string> } {
  const map = new Map(Object.entries(initial));
  const ws = {
    readFile: async (dir: string, file: string) => map.get(`${dir}/${file}`),
    writeFile: async (dir: string, file: string, text: string) => void map.set(`${dir}/${file}`, text),
  } as unknown as Workspace;
  return { ws, files: map };
}

const upstreamWon: Conflict = {
  resource: 'apps/Deployment web',
  file: 'deploy.yaml',
  path: '.spec.replicas',
  values: { origin: 3, upstream: 4, local: 6 },
  rule: 'upstream-changed',
  winner: 'upstream',
  message: '',
};
const localWon: Conflict = {
  ...upstreamWon,
  path: '.spec.paused',
  values: { origin: true, upstream: true, local: false },
  rule: 'both-changed-local-wins',
  winner: 'local',
};
const prepared = (conflicts: Conflict[]): Prepared => ({ title: 't', summary: 's', conflicts, resources: [] });
const label = (c: Conflict) => conflictChoice(c)!.label;
/** The tick of a conflict's box, as the body's Decide section gives it back. */
const tick = (c: Conflict) => ({ id: conflictChoice(c)!.id, text: label(c) });
const strayTick = { id: '0123456789abcdef', text: 'keep local `5` for `.spec.replicas` (apps/Deployment web)' };

describe('applying the decisions of a proposal', () => {
  it.each([
    {
      name: "keep local: local's value, pinned",
      ticked: [tick(upstreamWon)],
      decided: [],
      file: deploy(4).replace('replicas: 4', 'replicas: 6 # kdelta:local'),
      left: [localWon],
      said: 'decided on the proposal: keep local `6` for `.spec.replicas` (apps/Deployment web)',
    },
    {
      name: "take upstream: upstream's value, no pin (local then agrees with upstream, later updates follow it)",
      ticked: [tick(localWon)],
      decided: [],
      file: deploy(4).replace('paused: false', 'paused: true'),
      left: [upstreamWon],
      said: 'decided on the proposal: take upstream `true` for `.spec.paused` (apps/Deployment web)',
    },
    {
      name: 'decided by an earlier run: applied again, nothing said',
      ticked: [],
      decided: [conflictChoice(upstreamWon)!.id],
      file: deploy(4).replace('replicas: 4', 'replicas: 6 # kdelta:local'),
      left: [localWon],
      said: undefined,
    },
    {
      name: 'a tick that matches no conflict: ignored and said',
      ticked: [strayTick],
      decided: [],
      file: deploy(4),
      left: [upstreamWon, localWon],
      said: 'tick "keep local `5` for `.spec.replicas` (apps/Deployment web)" ignored: the field no longer conflicts as ticked (the upstream or the downstream changed since)',
    },
    {
      name: 'an earlier decision whose conflict is gone: dropped without a word',
      ticked: [],
      decided: [strayTick.id],
      file: deploy(4),
      left: [upstreamWon, localWon],
      said: undefined,
    },
  ])('$name', async ({ ticked, decided, file, left, said }) => {
    const { ws, files: after } = files({ 'web/deploy.yaml': deploy(4) });
    const out = await applyDecisions(ws, 'web', prepared([upstreamWon, localWon]), { ticked, decided });
    expect(after.get('web/deploy.yaml')).toBe(file);
    expect(out.conflicts).toEqual(left);
    expect(decisionsMessage(out.decisions, ticked)).toBe(said);
  });

  it('a tick the package cannot take (the resource is not in its file) is not applied, and says why', async () => {
    const { ws, files: after } = files({ 'web/deploy.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n' });
    const out = await applyDecisions(ws, 'web', prepared([upstreamWon]), { ticked: [tick(upstreamWon)], decided: [] });
    expect(after.get('web/deploy.yaml')).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n');
    expect(out.conflicts).toEqual([upstreamWon]);
    expect(out.decisions?.ignored).toEqual([
      { label: label(upstreamWon), reason: 'not applied: deploy.yaml holds no resource apps/Deployment web' },
    ]);
  });

  const long = (c: string, end: string) => `${c.repeat(90)}${end}`;
  it.each([
    { side: "local's", shown: { upstream: 'short', local: long('x', 'A') }, now: { upstream: 'short', local: long('x', 'B') } },
    { side: "upstream's", shown: { upstream: long('y', 'A'), local: 'mine' }, now: { upstream: long('y', 'B'), local: 'mine' } },
  ])(
    'a tick is of the full values it was shown with: $side value changed after its 90th character, it is not applied',
    async ({ shown, now }) => {
      const ticked: Conflict = { ...upstreamWon, path: '.spec.note', values: { origin: 'o', ...shown } };
      const rebuilt: Conflict = { ...ticked, values: { origin: 'o', ...now } };
      // the box's id tells them apart, and so does what a person reads (the part of the value that differs)
      expect(label(ticked)).not.toBe(label(rebuilt));
      const { ws, files: after } = files({ 'web/deploy.yaml': deploy(4) });
      const out = await applyDecisions(ws, 'web', prepared([rebuilt]), { ticked: [tick(ticked)], decided: [] });
      expect(after.get('web/deploy.yaml')).toBe(deploy(4));
      expect(out.conflicts).toEqual([rebuilt]);
      expect(out.decisions?.ignored.map((t) => t.reason)).toEqual([expect.stringMatching(/no longer conflicts as ticked/)]);
    },
  );

  it('no tick and no decision: the prepared package as it was, nothing read', async () => {
    const p = prepared([upstreamWon]);
    expect(await applyDecisions({} as Workspace, 'web', p, { ticked: [], decided: [] })).toBe(p);
  });
});
