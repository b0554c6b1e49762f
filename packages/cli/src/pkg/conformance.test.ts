// kpt's pkg get / pkg update conformance scenarios (@kdelta/test-support's fixtures/pkg-update,
// converted from kptdev/kpt, Apache-2.0) through `kdelta pkg`, on real local git repositories; the
// argument-parsing scenarios through the CLI's own argument rules. The command-line scenarios run
// here only: `kdelta pkg` calls package-update, whose own test runs the updater scenarios.
import { mkdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultBranch } from '@kdelta/git-source';
import { type Any, commitStep, describePkgCommandConformance, initUpstreams, scratch, Vars } from '@kdelta/test-support';
import { expect } from 'vitest';
import { parseFlags, stringFlag } from '../args.js';
import { cli } from './__fixtures__/runner.js';
import { parseGetArgs, parseUpdateArgs } from './args.js';

/**
 * Scenarios whose expected destination is replaced, each with its reason. kpt's unit test reads `.`
 * as the directory itself, but kpt the command (1.0.0-beta.56, tried) and its documentation put the
 * package in `./<package name>`, and so does kdelta: writing into the current directory would mix
 * the package with files already there (and, before this rule, overwrote those of the same name).
 */
const destinationOverrides: Record<string, { destination: string; reason: string }> = {
  'TestCmd_Execute_flagAndArgParsing/repo arg is split up correctly into ref and repo': {
    destination: '{{workspace}}/foo',
    reason: '`./` is an existing directory: the package goes into ./<repository name>',
  },
  'TestCmd_Execute_flagAndArgParsing/repo arg is split up correctly into ref, directory and repo': {
    destination: '{{workspace}}/java',
    reason: '`.` is an existing directory: the package goes into ./<package name>',
  },
  'TestCmd_Execute_flagAndArgParsing/current working dir -- should use current directory directly': {
    destination: '{{workspace}}/java',
    reason: '`foo/../bar/../` is the current directory, which exists: the package goes into ./<package name>',
  },
};

async function runArgParse(sc: Any): Promise<void> {
  const root = scratch();
  try {
    const vars = new Vars();
    vars.workspace = join(root, 'workspace');
    vars.otherDir = join(root, 'other');
    mkdirSync(vars.workspace);
    initUpstreams(root, sc, vars);
    const tmp = join(root, 'tmp');
    mkdirSync(tmp);
    for (const s of sc.setup ?? []) {
      if (s.commit) await commitStep(vars.sub(s.commit), vars, tmp);
      else if (s.mkdir) mkdirSync(resolve(vars.workspace, vars.sub(s.mkdir)), { recursive: true });
      else if (s.symlink) symlinkSync(vars.sub(s.symlink.target), resolve(vars.workspace, vars.sub(s.symlink.path)));
    }
    const p = vars.sub(sc.parse);
    const cwd = resolve(vars.workspace, p.cwd ?? '.');
    vars.cwd = realpathSync(cwd);
    const parseIt = async (): Promise<Record<string, unknown>> => {
      if (p.command === 'get') {
        const flags = parseFlags(p.args, { strategy: { type: 'string' } });
        const r = await parseGetArgs(flags.positionals, {
          cwd,
          strategy: stringFlag(flags, 'strategy'),
          defaultBranch: (repo) => defaultBranch({ repo, cwd }),
        });
        return { ...r };
      }
      const flags = parseFlags(p.args, { strategy: { type: 'string' } });
      const r = parseUpdateArgs(flags.positionals, { cwd, strategy: stringFlag(flags, 'strategy') });
      // Without --strategy the Kptfile's strategy applies, whose default is resource-merge.
      return { ...r, strategy: r.strategy ?? 'resource-merge' };
    };
    const ex = vars.sub(sc.expected);
    if (ex.error !== undefined) {
      await expect(parseIt()).rejects.toThrow(ex.error);
      if (sc.cliObservable) {
        const r = await cli(['pkg', p.command, ...p.args], cwd, process.env);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(ex.error);
      }
      return;
    }
    const parsed = await parseIt();
    const override = destinationOverrides[sc.test];
    if (override) ex.parsed.destination = vars.sub(override.destination);
    for (const [k, v] of Object.entries(ex.parsed)) {
      expect(parsed[k] ?? '', override && k === 'destination' ? `${k}, changed from kpt's test: ${override.reason}` : k).toBe(v);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describePkgCommandConformance({ run: cli, argParse: runArgParse });
