import { homedir as osHomedir, hostname, platform as osPlatform } from 'node:os';
import { describe, expect, it } from 'vitest';
import { homedir, platform } from '../../src/fs/home.js';
import { kernelHostname, thisHost } from '../../src/fs/owner.js';

// What sgq asks of the system without node:os (a one-page run does not load it): the same
// answers. Lock files and temporary names record the host; on Linux sgq reads the name the
// kernel keeps. Both must give the same name, or a lock taken by one version would look like
// another host's to the other.

describe('the platform and the home folder', () => {
  it('are what node:os says', () => {
    expect(platform()).toBe(osPlatform());
    expect(homedir()).toBe(osHomedir());
  });
});

describe('the host name', () => {
  it('is what os.hostname() says', () => {
    expect(thisHost()).toBe(hostname());
  });

  it.runIf(process.platform === 'linux')('on Linux, is read from the kernel, as os.hostname() gives it', () => {
    expect(kernelHostname()).toBe(hostname());
  });

  it.skipIf(process.platform === 'linux')('elsewhere, comes from node:os', () => {
    expect(kernelHostname()).toBeUndefined();
  });
});
