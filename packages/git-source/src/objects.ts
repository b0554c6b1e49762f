import { execFile } from 'node:child_process';
import { classify, GitError } from './errors.js';
import { gitProcessEnv, trackGit } from './exec.js';

/**
 * Many files of a local repository read by one git process (`git cat-file --batch`), where one
 * `git show` each would start a process per file: the run reads a Kptfile per package of a
 * downstream at once this way.
 */

export interface ReadObjectsOptions {
  /** The repository (a bare mirror or a work tree). */
  readonly dir: string;
  /** Objects as git names them: `<commit>:<path>`, a blob id. */
  readonly objects: readonly string[];
  /** The type of object wanted (default blob): one of another type reads as missing. */
  readonly type?: 'blob' | 'commit' | undefined;
  /** Larger objects are not returned (their size is): what is read stays bounded. */
  readonly maxBytes?: number | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** What one object read gave: its content, or its size when larger than allowed; missing: no such object (or not of the type wanted). */
export type ObjectRead =
  | { readonly kind: 'found'; readonly content: Buffer }
  | { readonly kind: 'too-large'; readonly size: number }
  | { readonly kind: 'missing' };

/** Read `objects` in one process; the answers in the same order. */
export function readObjects(options: ReadObjectsOptions): Promise<ObjectRead[]> {
  const { objects } = options;
  if (objects.length === 0) return Promise.resolve([]);
  for (const o of objects) {
    // one object a line: a name with a newline would read as two
    if (/[\r\n]/.test(o))
      return Promise.reject(new GitError({ code: 'failed', message: `object name with a line break: ${JSON.stringify(o)}` }));
  }
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['cat-file', '--batch'],
      { cwd: options.dir, env: gitProcessEnv(options.env), encoding: 'buffer', maxBuffer: 512 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          const detail = stderr.toString('utf8').trim() || error.message;
          reject(
            new GitError({
              code: classify(stderr.toString('utf8')),
              message: `git cat-file failed: ${detail}`,
              args: ['cat-file', '--batch'],
            }),
          );
          return;
        }
        try {
          resolve(parseBatch(stdout, objects.length, options.type ?? 'blob', options.maxBytes));
        } catch (e) {
          reject(e);
        }
      },
    );
    trackGit(child);
    child.stdin?.end(`${objects.join('\n')}\n`);
  });
}

/** `<id> <type> <size>\n<content>\n` per object, or `<name> missing\n` (`ambiguous` too). */
function parseBatch(out: Buffer, count: number, type: string, maxBytes: number | undefined): ObjectRead[] {
  const reads: ObjectRead[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) throw new GitError({ code: 'failed', message: 'git cat-file --batch: its output ended early' });
    const header = out.subarray(at, eol).toString('utf8');
    at = eol + 1;
    const m = / (blob|tree|commit|tag) (\d+)$/.exec(header);
    if (!m) {
      reads.push({ kind: 'missing' });
      continue;
    }
    const size = Number(m[2]);
    const content = out.subarray(at, at + size);
    at += size + 1;
    if (m[1] !== type) reads.push({ kind: 'missing' });
    else if (maxBytes !== undefined && size > maxBytes) reads.push({ kind: 'too-large', size });
    else reads.push({ kind: 'found', content: Buffer.from(content) });
  }
  return reads;
}
