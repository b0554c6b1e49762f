// A fleet shaped like a real one, end to end, with kdelta and git only. The blueprints repository
// publishes the package catalog/bucket (upstream/: a Config Connector StorageBucket, its setters,
// a pipeline of apply-setters and set-namespace) as releases catalog/bucket/v0.1.0 and v0.2.0.
// Three team repositories: team-analytics already holds a copy fetched with `kpt pkg get` at
// v0.1.0 and set to its own values (team-analytics/: what kpt wrote, then edited and rendered);
// team-payments and team-search are empty. The control resources (control/) adopt that copy and
// fan the blueprint out to the other two; no `revision` anywhere: they follow the releases.
//   1. `kdelta run` adopts team-analytics's copy and proposes the blueprint to the other two, each
//      at the latest release, v0.2.0; the teams merge their proposals.
//   2. The platform team tags catalog/bucket/v0.3.0: the next run proposes it to every team.
//   3. team-search declines its proposal (deletes the branch unmerged): the next run says so and
//      does not propose it again.
//   node examples/bucket-fleet/walkthrough.mjs [--dir <new or empty dir>] [--keep]   (after `pnpm build`;
//   `pnpm demo:buckets` does both). Without --dir the repositories are made in a temporary
//   directory, removed at the end unless --keep.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const TEAMS = ['team-analytics', 'team-payments', 'team-search'];
/** Fixed dates (and author) make each release the same commit every time: the kpt copy names v0.1.0's. */
const RELEASES = { 'v0.1.0': '2025-01-14T10:00:00Z', 'v0.2.0': '2025-03-03T10:00:00Z', 'v0.3.0': '2025-05-20T10:00:00Z' };
/** The blueprints repository as team-analytics/bucket/Kptfile names it. */
const BLUEPRINTS_URL = 'https://git.example.com/platform/blueprints';
/** The branch each team's proposal is on. */
export const BRANCHES = {
  'team-analytics': 'kdelta/analytics-bucket',
  'team-payments': 'kdelta/buckets-team-payments-bucket',
  'team-search': 'kdelta/buckets-team-search-bucket',
};

/**
 * Builds the fleet in `root` (an empty directory) and walks the story, printing each step with
 * `say`. `kdelta(args, cwd, env)` runs the CLI and resolves to its exit code and output; a
 * command that fails stops the walkthrough.
 */
export async function walkthrough({ root, kdelta, say }) {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Platform Team',
    GIT_AUTHOR_EMAIL: 'platform@example.com',
    GIT_COMMITTER_NAME: 'Platform Team',
    GIT_COMMITTER_EMAIL: 'platform@example.com',
    KDELTA_CACHE_DIR: join(root, 'cache'),
  };
  // none of the user's settings that would change a commit: signing, line endings
  const git = (cwd, args, extraEnv = {}) =>
    execFileSync(
      'git',
      ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', '-c', 'core.autocrlf=false', ...args],
      { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    ).trim();
  const step = (text) => say(`\n== ${text}`);
  const upstream = join(root, 'blueprints');
  const control = join(root, 'control');
  const teamRepo = (team) => join(root, 'teams', `${team}.git`);

  async function run(...args) {
    say(`$ kdelta ${args.join(' ')}`);
    const r = await kdelta(args, control, env);
    if (r.stderr) say(r.stderr.trimEnd().replace(/^/gm, '  '));
    if (r.stdout) say(r.stdout.trimEnd());
    if (r.code !== 0) throw new Error(`kdelta ${args.join(' ')} exited ${r.code}: ${(r.stderr || r.stdout).trim()}`);
  }

  /** A release of the blueprint: its files as of `version`, committed on its date, tagged. */
  function release(version) {
    rmSync(join(upstream, 'catalog'), { recursive: true, force: true });
    cpSync(join(here, 'upstream', version), upstream, { recursive: true });
    git(upstream, ['add', '--all']);
    git(upstream, ['commit', '--quiet', '-m', `bucket ${version}`], {
      GIT_AUTHOR_DATE: RELEASES[version],
      GIT_COMMITTER_DATE: RELEASES[version],
    });
    git(upstream, ['tag', `catalog/bucket/${version}`]);
  }
  const tags = () => git(upstream, ['tag']).split('\n').join(', ');

  /** The body of a proposal's record, without its YAML header and kdelta's marker lines. */
  function proposalBody(team, variant) {
    const text = readFileSync(join(control, '.kdelta', 'proposals', team, `${variant}.md`), 'utf8');
    return (text.split('\n---\n')[1] ?? '')
      .split('\n')
      .filter((l) => !l.startsWith('<!-- kdelta:') && !l.startsWith('_Written by kdelta'))
      .join('\n')
      .trim();
  }

  step('The blueprints repository: catalog/bucket released as v0.1.0 and v0.2.0');
  mkdirSync(upstream);
  git(upstream, ['init', '--quiet']);
  release('v0.1.0');
  release('v0.2.0');
  say(`blueprints: tags ${tags()}`);

  step('Three team repositories; team-analytics holds a `kpt pkg get` copy of v0.1.0, set to its values');
  const copied = readFileSync(join(here, 'team-analytics', 'bucket', 'Kptfile'), 'utf8');
  const locked = /\n {4}commit: ([0-9a-f]{40})\n/.exec(copied)?.[1];
  const v010 = git(upstream, ['rev-parse', 'catalog/bucket/v0.1.0']);
  if (locked !== v010)
    throw new Error(
      `team-analytics/bucket/Kptfile: upstreamLock.git.commit is ${locked}, but catalog/bucket/v0.1.0 is ${v010}: upstream/v0.1.0 changed since the copy was made; make it again`,
    );
  for (const team of TEAMS) {
    const seed = join(root, 'seed', team);
    mkdirSync(seed, { recursive: true });
    git(seed, ['init', '--quiet']);
    writeFileSync(join(seed, 'README.md'), `# ${team}\n\nWhat ${team}'s Config Controller applies.\n`);
    if (team === 'team-analytics') {
      cpSync(join(here, 'team-analytics'), seed, { recursive: true });
      // The copy names the blueprints repository it was fetched from: here, the one made above
      // (in a real fleet, the URL that its Repository names too).
      writeFileSync(join(seed, 'bucket', 'Kptfile'), copied.replaceAll(BLUEPRINTS_URL, upstream));
    }
    git(seed, ['add', '--all']);
    git(seed, ['commit', '--quiet', '-m', team === 'team-analytics' ? 'bucket: kpt pkg get catalog/bucket@v0.1.0, our values' : 'init']);
    git(root, ['clone', '--quiet', '--bare', seed, teamRepo(team)]);
  }
  rmSync(join(root, 'seed'), { recursive: true, force: true });
  say('team-analytics: bucket/ as kpt wrote it (Kptfile upstream and upstreamLock at catalog/bucket/v0.1.0, no kdelta');
  say('  annotation), then setters.yaml set to its values (events, analytics, analytics-prod, nearline), rendered,');
  say('  and bucket.yaml edited (location EU)');
  say('team-payments, team-search: no bucket yet');
  mkdirSync(control);
  cpSync(join(here, 'control'), join(control, '.kdelta'), { recursive: true });
  writeFileSync(join(control, '.gitignore'), '.kdelta/proposals/\n');
  git(control, ['init', '--quiet']);
  git(control, ['add', '--all']);
  git(control, ['commit', '--quiet', '-m', 'control resources']);
  say(`control/.kdelta: ${readdirSync(join(control, '.kdelta')).sort().join(', ')} (no revision: the variants follow releases)`);

  step("First run: adopt team-analytics's copy, fan the blueprint out to the others, at its latest release");
  await run('run');
  say('\n--- .kdelta/proposals/team-analytics/analytics-bucket.md');
  say(proposalBody('team-analytics', 'analytics-bucket'));
  say(`\n--- team-analytics, ${BRANCHES['team-analytics']}: bucket/bucket.yaml (v0.2.0's changes merged, its values and edits kept)`);
  say(git(teamRepo('team-analytics'), ['show', `${BRANCHES['team-analytics']}:bucket/bucket.yaml`]));
  say(`\n--- team-payments, ${BRANCHES['team-payments']}: bucket/bucket.yaml (its setters injected, the pipeline run)`);
  say(git(teamRepo('team-payments'), ['show', `${BRANCHES['team-payments']}:bucket/bucket.yaml`]));

  step('The teams merge their proposals');
  for (const team of TEAMS) {
    const work = join(root, 'work', team);
    git(root, ['clone', '--quiet', teamRepo(team), work]);
    git(work, ['merge', '--quiet', '--no-edit', `origin/${BRANCHES[team]}`]);
    git(work, ['push', '--quiet', 'origin', 'main']);
    rmSync(work, { recursive: true, force: true });
    say(`${team}: merged ${BRANCHES[team]} into main`);
  }

  step('The platform team releases catalog/bucket/v0.3.0 (a lifecycle rule); nobody edits the control repository');
  release('v0.3.0');
  say(`blueprints: tags ${tags()}`);
  await run('run');
  say(
    `control repository: ${git(control, ['status', '--porcelain']) === '' ? 'no change' : 'CHANGED'}, still ${git(control, ['rev-list', '--count', 'HEAD'])} commit`,
  );
  await run('proposals');

  step('team-search declines its proposal: deletes its branch without merging it');
  say(`$ git push origin --delete ${BRANCHES['team-search']}   (in team-search's clone)`);
  const search = join(root, 'work', 'team-search');
  git(root, ['clone', '--quiet', teamRepo('team-search'), search]);
  git(search, ['push', '--quiet', 'origin', '--delete', BRANCHES['team-search']]);
  rmSync(search, { recursive: true, force: true });
  await run('run');
  await run('proposals');
}

/** The installed CLI of this checkout, one process per command, as a user runs it. */
function spawnKdelta(args, cwd, env) {
  const bin = join(here, '..', '..', 'packages', 'cli', 'bin', 'kdelta.js');
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, env, encoding: 'utf8' });
  return Promise.resolve({ code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr });
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const dir = args.includes('--dir') ? args[args.indexOf('--dir') + 1] : undefined;
  if (args.includes('--dir') && !dir) throw new Error('--dir needs a directory');
  if (dir && existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`--dir ${dir}: not empty`);
  if (dir) mkdirSync(dir, { recursive: true });
  const root = realpathSync(dir ? resolve(dir) : mkdtempSync(join(tmpdir(), 'kdelta-buckets-')));
  const keep = dir !== undefined || args.includes('--keep');
  const tty = process.stdout.isTTY;
  const say = (text) => process.stdout.write(`${tty ? text.replace(/^\n== (.*)$/, '\n\x1b[1m== $1\x1b[0m') : text}\n`);
  try {
    await walkthrough({ root, kdelta: spawnKdelta, say });
  } finally {
    if (keep) say(`\n(kept: ${root})`);
    else rmSync(root, { recursive: true, force: true });
  }
}
