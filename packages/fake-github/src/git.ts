import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Person {
  readonly name: string;
  readonly email: string;
  /** ISO 8601; now when absent. */
  readonly date?: string;
}

/** Environment that keeps the user's git configuration out of the fake's repositories. */
const BASE_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  LC_ALL: 'C',
};

export function git(gitDir: string, args: readonly string[], opts: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}) {
  return new Promise<string>((resolve, reject) => {
    const child = execFile(
      'git',
      ['--git-dir', gitDir, ...args],
      { env: { ...BASE_ENV, ...opts.env }, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`git ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
        else resolve(stdout);
      },
    );
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/** The commit a ref points at, or undefined when it does not exist. */
export async function resolveRef(gitDir: string, ref: string): Promise<string | undefined> {
  try {
    return (await git(gitDir, ['rev-parse', '--verify', '--quiet', ref + '^{commit}'])).trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function objectType(gitDir: string, sha: string): Promise<string | undefined> {
  try {
    return (await git(gitDir, ['cat-file', '-t', sha])).trim();
  } catch {
    return undefined;
  }
}

export async function writeBlob(gitDir: string, content: Buffer): Promise<string> {
  return (await git(gitDir, ['hash-object', '-w', '--stdin'], { input: content })).trim();
}

export interface TreeChange {
  readonly path: string;
  readonly mode: string;
  readonly type: 'blob' | 'tree' | 'commit';
  /** null deletes the path. */
  readonly sha: string | null;
}

/** A new tree: `base` (a tree or commit, or none) with the changes applied, built in a throwaway index. */
export async function buildTree(gitDir: string, base: string | undefined, changes: readonly TreeChange[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fake-github-index-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    if (base) await git(gitDir, ['read-tree', base], { env });
    else await git(gitDir, ['read-tree', '--empty'], { env });
    for (const c of changes) {
      const path = c.path.replace(/^\/+|\/+$/g, '');
      if (c.sha === null || c.type === 'tree') {
        // Drop the path (a file, or everything under a directory) before replacing or deleting it.
        const listed = await git(gitDir, ['ls-files', '-z', '--', path], { env });
        const paths = listed.split('\0').filter(Boolean);
        if (paths.length) await git(gitDir, ['update-index', '--force-remove', '-z', '--stdin'], { env, input: paths.join('\0') + '\0' });
      }
      if (c.sha === null) continue;
      if (c.type === 'tree') await git(gitDir, ['read-tree', `--prefix=${path}/`, c.sha], { env });
      else await git(gitDir, ['update-index', '--add', '--cacheinfo', `${c.mode},${c.sha},${path}`], { env });
    }
    return (await git(gitDir, ['write-tree'], { env })).trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function commitTree(
  gitDir: string,
  tree: string,
  parents: readonly string[],
  message: string,
  author: Person,
  committer: Person = author,
): Promise<string> {
  const env = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: author.date ?? new Date().toISOString(),
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    GIT_COMMITTER_DATE: committer.date ?? new Date().toISOString(),
  };
  const args = ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])];
  return (await git(gitDir, args, { env, input: message })).trim();
}

export interface CommitInfo {
  readonly sha: string;
  readonly tree: string;
  readonly parents: string[];
  readonly author: Required<Person>;
  readonly committer: Required<Person>;
  readonly message: string;
}

export async function readCommit(gitDir: string, sha: string): Promise<CommitInfo> {
  const raw = await git(gitDir, ['cat-file', 'commit', sha]);
  const split = raw.indexOf('\n\n');
  const head = raw.slice(0, split === -1 ? raw.length : split);
  const message = split === -1 ? '' : raw.slice(split + 2);
  let tree = '';
  const parents: string[] = [];
  let author: Required<Person> = { name: '', email: '', date: '' };
  let committer = author;
  for (const line of head.split('\n')) {
    const sp = line.indexOf(' ');
    const key = line.slice(0, sp);
    const value = line.slice(sp + 1);
    if (key === 'tree') tree = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = parsePerson(value);
    else if (key === 'committer') committer = parsePerson(value);
  }
  return { sha, tree, parents, author, committer, message };
}

function parsePerson(value: string): Required<Person> {
  const m = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(value);
  if (!m) return { name: value, email: '', date: new Date(0).toISOString() };
  return { name: m[1]!, email: m[2]!, date: new Date(Number(m[3]) * 1000).toISOString().replace(/\.000Z$/, 'Z') };
}

/** Commits reachable from head and not from base, oldest first. */
export async function commitsBetween(gitDir: string, base: string, head: string): Promise<string[]> {
  const out = await git(gitDir, ['rev-list', '--reverse', `${base}..${head}`]);
  return out.split('\n').filter(Boolean);
}

/**
 * Serve one git smart-HTTP request through `git http-backend` (CGI): the request body goes to its stdin,
 * its CGI headers become the response's status and headers, the rest is streamed back.
 */
export function httpBackend(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { projectRoot: string; pathInfo: string; query: string; remoteUser: string },
): Promise<number> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = {
      ...BASE_ENV,
      GIT_PROJECT_ROOT: opts.projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: opts.pathInfo,
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: opts.query,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: opts.remoteUser,
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: 'HTTP/1.1',
    };
    if (req.headers['content-length']) env['CONTENT_LENGTH'] = req.headers['content-length'];
    // http-backend inflates gzip request bodies itself when told the encoding.
    if (req.headers['content-encoding']) env['HTTP_CONTENT_ENCODING'] = req.headers['content-encoding'];
    if (req.headers['git-protocol']) env['GIT_PROTOCOL'] = String(req.headers['git-protocol']);
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    req.pipe(child.stdin);
    child.stdin.on('error', () => {});
    let headerBuf = Buffer.alloc(0);
    let headersDone = false;
    let status = 200;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      headerBuf = Buffer.concat([headerBuf, chunk]);
      let end = headerBuf.indexOf('\r\n\r\n');
      let sepLen = 4;
      if (end === -1) {
        end = headerBuf.indexOf('\n\n');
        sepLen = 2;
      }
      if (end === -1) return;
      headersDone = true;
      const lines = headerBuf.subarray(0, end).toString('latin1').split(/\r?\n/);
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon === -1) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
        else res.appendHeader(name, value);
      }
      res.statusCode = status;
      const rest = headerBuf.subarray(end + sepLen);
      if (rest.length) res.write(rest);
    });
    child.on('close', (code) => {
      if (!headersDone) {
        res.statusCode = 500;
        res.setHeader('content-type', 'text/plain');
        res.end(`git http-backend failed (${code}): ${stderr}`);
        resolve(500);
        return;
      }
      res.end();
      resolve(status);
    });
  });
}
