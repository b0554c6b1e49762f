// A git smart-HTTP server on 127.0.0.1 that requires Basic credentials: `git http-backend` (part of
// git) run as CGI behind node's http server, with a 401 for any request without the right header.
import { spawn, execFileSync } from 'node:child_process';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { join } from 'node:path';

export interface AuthGitServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Requests answered, by whether they carried the right credentials. */
  readonly seen: { authorized: number; refused: number };
  close(): Promise<void>;
}

const backend = join(execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim(), 'git-http-backend');

/** Serve the repositories under `projectRoot` to clients that authenticate as `username`/`password`. */
export async function serveGitWithAuth(projectRoot: string, username: string, password: string): Promise<AuthGitServer> {
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const seen = { authorized: 0, refused: 0 };
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== expected) {
      seen.refused++;
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="kdelta-test"', 'Content-Type': 'text/plain' });
      res.end('credentials required\n');
      return;
    }
    seen.authorized++;
    cgi(projectRoot, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answer one smart-HTTP request with `git http-backend` serving the repositories under `projectRoot`. */
export function cgi(projectRoot: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    REMOTE_USER: 'test',
    REMOTE_ADDR: '127.0.0.1',
    CONTENT_TYPE: req.headers['content-type'] ?? '',
  };
  if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
  if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = String(req.headers['content-encoding']);
  if (req.headers['git-protocol']) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
  const child = spawn(backend, [], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  req.pipe(child.stdin);
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.on('close', () => {
    const out = Buffer.concat(chunks);
    const split = out.indexOf('\r\n\r\n');
    const head = split < 0 ? '' : out.subarray(0, split).toString('latin1');
    const body = split < 0 ? out : out.subarray(split + 4);
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.end(body);
  });
}
