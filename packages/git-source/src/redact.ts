import { withoutCredentials } from './url.js';

/**
 * Remove credentials from text that may reach a user, a log or an error: passwords and tokens
 * embedded in URLs (`https://user:token@host` → `https://***@host`), authorization headers, and
 * every known secret value (with its base64 forms) passed in.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  return redactSecrets(text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s'"]+@/gi, '$1***@'), secrets);
}

/**
 * Like {@link redact}, but URLs keep their readable form: the credentials are left out as
 * {@link withoutCredentials} does (`https://user:token@host/r` → `https://host/r`, while
 * `ssh://git@host/r` stays as it is). For progress lines and messages that name a repository.
 */
export function hideCredentials(text: string, secrets: readonly string[] = []): string {
  return redactSecrets(
    text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#'"]*@/gi, (prefix) => withoutCredentials(prefix)),
    secrets,
  );
}

function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text.replace(/(authorization:\s*(?:basic|bearer|token)\s+)\S+/gi, '$1***');
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    for (const form of secretForms(secret).sort((a, b) => b.length - a.length)) out = out.split(form).join('***');
  }
  return out;
}

function secretForms(secret: string): string[] {
  return [
    secret,
    Buffer.from(secret).toString('base64'),
    Buffer.from(`x-access-token:${secret}`).toString('base64'),
    encodeURIComponent(secret),
  ];
}
