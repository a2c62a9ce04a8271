import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isInside } from '../sdk/index.js';

describe('isInside', () => {
  const root = resolve('/srv/work');
  it('holds the root itself and what lies below it', () => {
    expect(isInside(root, root)).toBe(true);
    expect(isInside(root, join(root, 'memory', 'a.md'))).toBe(true);
    // A name that merely starts with ".." is still a file in the folder.
    expect(isInside(root, join(root, '..notes.md'))).toBe(true);
  });
  it('refuses parents, siblings sharing a prefix, and escapes through ".."', () => {
    expect(isInside(root, resolve('/srv'))).toBe(false);
    expect(isInside(root, resolve('/srv/work-old/a.md'))).toBe(false);
    expect(isInside(root, join(root, '..', 'etc', 'passwd'))).toBe(false);
  });
});
