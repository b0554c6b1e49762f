import { type UrlCredentials, hideCredentials, splitCredentials, withoutCredentials } from '@kdelta/git-source';
import { PackageTree, readKptfileText } from '@kdelta/kptfile-model';
import type { Io } from '../command.js';

/** Credentials known to a command, by repository URL (without credentials). */
export class KnownCredentials {
  readonly byRepo = new Map<string, UrlCredentials>();
  readonly secrets: string[] = [];

  constructor(env: Readonly<Record<string, string | undefined>>) {
    for (const name of ['KDELTA_GIT_TOKEN', 'GITHUB_TOKEN', 'GH_TOKEN']) {
      const value = env[name];
      if (value) this.secrets.push(value);
    }
  }

  /** Remember the credentials written into `repo` (or given for it), if any. */
  add(repo: string | undefined, credentials = repo === undefined ? undefined : splitCredentials(repo).credentials): void {
    if (repo === undefined || !credentials) return;
    this.byRepo.set(withoutCredentials(repo), credentials);
    this.hide(credentials);
  }

  /** Keep the credentials written into any command-line argument out of the output. */
  hideArguments(argv: readonly string[]): void {
    for (const arg of argv) {
      const credentials = splitCredentials(arg).credentials;
      if (credentials) this.hide(credentials);
    }
  }

  private hide(credentials: UrlCredentials): void {
    if (credentials.password) this.secrets.push(credentials.password, `${credentials.username}:${credentials.password}`);
    else this.secrets.push(credentials.username);
  }

  /**
   * The credentials in the Kptfiles of a package and its subpackages (written by an older tool):
   * kdelta writes those Kptfiles back without them before it fetches, yet the fetch needs them.
   */
  addFromPackage(pkgPath: string): void {
    const pkg = PackageTree.read(pkgPath)?.package();
    if (!pkg) return;
    for (const rel of ['', ...pkg.nestedPackages({ includeRemote: true, recurseIntoRemote: true })]) {
      const text = pkg.at(rel).kptfileText();
      if (text === undefined) continue;
      let kptfile;
      try {
        kptfile = readKptfileText(text).kptfile;
      } catch {
        continue; // a broken Kptfile is reported by the command itself
      }
      this.add(kptfile?.upstream?.git?.repo);
      this.add(kptfile?.upstreamLock?.git?.repo);
    }
  }
}

/**
 * Run a pkg command so that no credential reaches the terminal: every line written to stdout or
 * stderr, and the message of an error it throws, loses the userinfo of any http(s) URL (the
 * password of any other) and every secret in `known`, which the command may add to while it
 * runs. The URLs kdelta prints are clean to begin with; this is the net under them (a Kptfile
 * written by an older tool, a message from git or a library).
 */
export async function keepSecrets<T>(known: KnownCredentials, io: Io, run: (io: Io) => Promise<T>): Promise<T> {
  const clean = (text: string) => hideCredentials(text, known.secrets);
  const guarded: Io = { ...io, stdout: (text) => io.stdout(clean(text)), stderr: (text) => io.stderr(clean(text)) };
  try {
    return await run(guarded);
  } catch (error) {
    if (error instanceof Error) {
      // Changed in place: the CLI tells usage errors from failures by their class.
      error.message = clean(error.message);
      if (error.stack) error.stack = clean(error.stack);
    }
    throw error;
  }
}
