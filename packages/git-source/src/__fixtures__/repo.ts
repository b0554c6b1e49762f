import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Real temporary git repositories for tests. */
export function tempDir(prefix = 'kdelta-git-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  }).trim();
}

export interface TestRepo {
  readonly dir: string;
  write(files: Readonly<Record<string, string | null>>): void;
  commit(message?: string): string;
  tag(name: string, target?: string, annotated?: boolean): void;
  head(): string;
}

/** A new repository at `dir` (which must not be one already: git warns on re-init). */
export function initRepo(dir: string, branch = 'main'): TestRepo {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet', `--initial-branch=${branch}`);
  return repoAt(dir);
}

/** The helpers over an existing repository, such as a clone. */
export function repoAt(dir: string): TestRepo {
  return {
    dir,
    write(files) {
      for (const [path, text] of Object.entries(files)) {
        const full = join(dir, path);
        if (text === null) rmSync(full, { force: true, recursive: true });
        else {
          mkdirSync(dirname(full), { recursive: true });
          writeFileSync(full, text);
        }
      }
    },
    commit(message = 'change') {
      git(dir, 'add', '--all');
      git(dir, 'commit', '--quiet', '--allow-empty', '-m', message);
      return git(dir, 'rev-parse', 'HEAD');
    },
    tag(name, target = 'HEAD', annotated = false) {
      if (annotated) git(dir, 'tag', '-f', '-a', '-m', name, name, target);
      else git(dir, 'tag', '-f', name, target);
    },
    head() {
      return git(dir, 'rev-parse', 'HEAD');
    },
  };
}
