import { describe, expect, it } from 'vitest';
import { controlIdentity } from './ownership.js';

describe('controlIdentity', () => {
  it('names one repository alike over every transport, without credentials', () => {
    const same = [
      'https://github.com/acme/fleet-config.git',
      'https://user:secret-token@github.com/acme/fleet-config',
      'ssh://git@github.com/acme/fleet-config.git',
      'git@github.com:acme/fleet-config.git',
      'https://GitHub.com/acme/fleet-config/',
    ].map(controlIdentity);
    expect(new Set(same)).toEqual(new Set(['github.com/acme/fleet-config']));
    expect(same.join(' ')).not.toContain('secret-token');
    expect(controlIdentity('git@github.com:acme/other.git')).toBe('github.com/acme/other');
  });

  it('keeps a local path', () => {
    expect(controlIdentity('/srv/git/control.git')).toBe('/srv/git/control');
    expect(controlIdentity('file:///srv/git/control')).toBe('/srv/git/control');
  });
});
