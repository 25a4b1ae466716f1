import { afterEach, describe, expect, it, vi } from 'vitest';

// The web build replaces platform/spool-files.js by its twin, as this test does.
describe('the spool in the web build', () => {
  afterEach(() => vi.doUnmock('../../src/platform/spool-files.js'));

  it('refuses the option at construction, naming it', async () => {
    vi.doMock('../../src/platform/spool-files.js', () => import('../../src/platform/spool-files.web.js'));
    vi.resetModules();
    const { Analytics } = await import('../../src/index.js');
    expect(() => new Analytics('wk', { spool: './spool' })).toThrow(
      expect.objectContaining({ name: 'ConfigError', option: 'spool', message: expect.stringContaining('no file system') }),
    );
  });
});
