import { describe, expect, it } from 'vitest';
import { classify } from './errors.js';

describe('classify', () => {
  it('tells a push the server refused (403) from refused credentials', () => {
    const refused =
      "remote: Permission to org/c1.git denied to github-actions[bot].\nfatal: unable to access 'https://github.com/org/c1.git/': The requested URL returned error: 403";
    expect(classify(refused)).toBe('forbidden');
    expect(classify("fatal: Authentication failed for 'https://github.com/org/c1.git/'")).toBe('auth');
    expect(classify('fatal: something else went wrong')).toBe('failed');
  });
});
