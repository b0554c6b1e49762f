import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listRemoteRefs } from './refs.js';
import { sourceTrust } from './trust.js';

// Two https git servers on 127.0.0.1 (two ports: two servers to a token), each writing down the
// Authorization header of every request and answering 404: what a server learns from git's first
// request is all this asks. git trusts their certificate through GIT_SSL_CAINFO.

interface Recording {
  readonly origin: string;
  /** Every request: its path and its Authorization header, decoded from Basic. */
  readonly seen: { path: string; authorization: string | undefined }[];
  readonly server: Server;
}

const dir = mkdtempSync(join(tmpdir(), 'kdelta-server-tokens-'));
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');
let a: Recording;
let b: Recording;

async function serve(): Promise<Recording> {
  const seen: Recording['seen'] = [];
  const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    const header = req.headers.authorization;
    const basic = header === undefined ? undefined : /^Basic\s+(.+)$/i.exec(header);
    seen.push({
      path: new URL(req.url ?? '/', 'https://127.0.0.1').pathname,
      authorization: basic?.[1] ? Buffer.from(basic[1], 'base64').toString('utf8') : header,
    });
    req.resume();
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { origin: `https://127.0.0.1:${address.port}`, seen, server };
}

beforeAll(async () => {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore', input: '' },
  );
  a = await serve();
  b = await serve();
});

afterAll(async () => {
  for (const r of [a, b]) {
    r?.server.closeAllConnections();
    await new Promise<void>((resolve) => (r ? r.server.close(() => resolve()) : resolve()));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('a token per server, over https', () => {
  it('reaches only its own server’s repositories that the user named or listed', async () => {
    const env = {
      GIT_SSL_CAINFO: cert,
      GIT_TERMINAL_PROMPT: '0',
      KDELTA_SERVER_TOKENS: `${a.origin}=token-a\n${b.origin}=token-b`,
    };
    const trust = sourceTrust({ named: [`${a.origin}/org/named.git`], repositories: [`${b.origin}/team/*`], env });
    const reads = [
      [a, '/org/named.git', 'x-access-token:token-a'],
      [a, '/org/unnamed.git', undefined],
      [b, '/team/listed.git', 'x-access-token:token-b'],
      [b, '/other/unlisted.git', undefined],
    ] as const;
    for (const [server, path] of reads) {
      // every read is refused (404): what matters is what each server was sent
      await expect(listRemoteRefs({ repo: `${server.origin}${path}`, env, trust })).rejects.toThrow();
    }
    for (const [server, path, authorization] of reads) {
      const sent = server.seen.filter((s) => s.path.startsWith(path)).map((s) => s.authorization);
      expect(sent.length, `${server.origin}${path}`).toBeGreaterThan(0);
      expect(new Set(sent), `${server.origin}${path}`).toEqual(new Set([authorization]));
    }
  });
});
