import { describe, expect, it } from 'vitest';
import { replacedDirectoryNote } from './replaced-dir.js';

describe('replacedDirectoryNote', () => {
  it.each([
    ['/w/app', '/w/app', true],
    ['/w/app', '/w/app/sub', true],
    ['/w/app', '/w', false],
    ['/w/app', '/w/application', false],
    ['/w/app', '/other', false],
  ])('package %s, working directory %s: note %s', (dir, cwd, expected) => {
    expect(replacedDirectoryNote(dir, cwd) !== undefined).toBe(expected);
  });
});
