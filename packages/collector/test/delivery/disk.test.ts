// The disk's floor, and DiskRoomReading on real disks (tmpfs mounts: CI runs as root): near its floor a disk is read
// again at every question, so a writer asking before each write never keeps room the journal
// needs; far from it, a reading serves for a second.
import { rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskRoomReading, freeFloor } from '../../src/delivery/disk.js';
import { mountTmpfs } from '../../../../test/helpers/tmpfs.js';

const MiB = 1024 * 1024;
const small = mountTmpfs('2m');
// tmpfs takes memory only for what is written: a large one costs nothing here.
const large = mountTmpfs('2g');
afterAll(() => {
  for (const disk of [small, large]) if (typeof disk !== 'string') disk.unmount();
});

const freeOn = (dir: string) => {
  const { bavail, bsize } = statfsSync(dir);
  return bavail * bsize;
};

describe('freeFloor', () => {
  it('asks a quarter of a small disk to stay free, and at most 4 GiB of a large one', () => {
    expect(freeFloor(2 * MiB)).toBe(MiB / 2);
    expect(freeFloor(8 * 1024 * MiB)).toBe(2 * 1024 * MiB);
    // A 252 GB disk with 63 GB free (a quarter) keeps the page's history and the delivery records.
    expect(freeFloor(252e9)).toBe(4 * 1024 * MiB);
  });
});

describe('DiskRoomReading', () => {
  it.skipIf(typeof small === 'string')('near the floor, sees a write made a moment before', async () => {
    const disk = small as Exclude<typeof small, string>;
    let now = 0;
    const reading = new DiskRoomReading(disk.dir, () => now);
    const before = await reading.room();
    writeFileSync(path.join(disk.dir, 'a'), Buffer.alloc(MiB / 2));
    now += 1;
    expect((await reading.room()).free).toBe(freeOn(disk.dir));
    expect((await reading.room()).free).toBeLessThan(before.free - MiB / 4);
    rmSync(path.join(disk.dir, 'a'));
  });

  it.skipIf(typeof large === 'string')('far from the floor, reads the disk at most once a second', async () => {
    const disk = large as Exclude<typeof large, string>;
    let now = 0;
    const reading = new DiskRoomReading(disk.dir, () => now);
    const before = await reading.room();
    writeFileSync(path.join(disk.dir, 'a'), Buffer.alloc(4 * MiB));
    now += 999;
    expect(await reading.room()).toEqual(before);
    now += 1;
    expect((await reading.room()).free).toBe(freeOn(disk.dir));
    expect((await reading.room()).free).toBe(before.free - 4 * MiB);
    rmSync(path.join(disk.dir, 'a'));
  });
});
