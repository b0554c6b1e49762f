/**
 * Remove credentials from text that may reach a user, a log or an error: passwords and tokens
 * embedded in URLs (`https://user:token@host` → `https://***@host`), authorization headers, and
 * every known secret value (with its base64 forms) passed in.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s'"]+@/gi, '$1***@');
  out = out.replace(/(authorization:\s*(?:basic|bearer|token)\s+)\S+/gi, '$1***');
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
