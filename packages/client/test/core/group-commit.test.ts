import { afterEach, describe, expect, it, vi } from 'vitest';
import { GroupCommit, type GroupCommitOptions } from '../../src/core/group-commit.js';

/** A group commit whose flushes wait until the test ends them, recording what each carried. */
function controlled(options?: GroupCommitOptions) {
  const flushes: { items: number[]; end: (error?: Error) => void }[] = [];
  // Each flush answers every item with ten times its value, as a statement answers each row.
  const commit = new GroupCommit<number, number>(
    (items) => new Promise<number[]>((resolve, reject) => flushes.push({ items, end: (error) => (error ? reject(error) : resolve(items.map((item) => item * 10))) })),
    options,
  );
  return { commit, flushes };
}

describe('GroupCommit', () => {
  it('flushes the first item at once, and everything added meanwhile together in the next flush', async () => {
    const { commit, flushes } = controlled();
    const first = commit.add(1);
    const rest = [commit.add(2), commit.add(3), commit.add(4)];
    expect(flushes.map((f) => f.items)).toEqual([[1]]);
    flushes[0]!.end();
    expect(await first).toBe(10);
    expect(flushes.map((f) => f.items)).toEqual([[1], [2, 3, 4]]);
    flushes[1]!.end();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    await commit.idle();
  });

  it('rejects the callers of a failed flush only, and keeps flushing after it', async () => {
    const { commit, flushes } = controlled();
    const first = commit.add(1);
    const failing = [commit.add(2), commit.add(3)];
    flushes[0]!.end();
    await first;
    const later = commit.add(4);
    flushes[1]!.end(new Error('connection lost'));
    for (const settled of await Promise.allSettled(failing)) expect(settled).toMatchObject({ status: 'rejected', reason: { message: 'connection lost' } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushes.map((f) => f.items)).toEqual([[1], [2, 3], [4]]);
    flushes[2]!.end();
    await expect(later).resolves.toBe(40);
  });

  it('is idle at once when nothing was added, and once the last flush ends otherwise', async () => {
    const { commit, flushes } = controlled();
    await commit.idle();
    const added = commit.add(1);
    let idle = false;
    void commit.idle().then(() => (idle = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    flushes[0]!.end();
    await added;
    await commit.idle();
    expect(idle).toBe(true);
  });

  describe('with linger', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('flushes what arrived within linger ms of the first item as one group, then waits again for the next', async () => {
      vi.useFakeTimers();
      const { commit, flushes } = controlled({ linger: 200 });
      const first = [commit.add(1), commit.add(2)];
      await vi.advanceTimersByTimeAsync(150);
      first.push(commit.add(3));
      expect(flushes).toEqual([]);
      await vi.advanceTimersByTimeAsync(50);
      expect(flushes.map((f) => f.items)).toEqual([[1, 2, 3]]);
      const later = commit.add(4);
      flushes[0]!.end();
      expect(await Promise.all(first)).toEqual([10, 20, 30]);
      await vi.advanceTimersByTimeAsync(199);
      expect(flushes).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(flushes.map((f) => f.items)).toEqual([[1, 2, 3], [4]]);
      flushes[1]!.end();
      await expect(later).resolves.toBe(40);
    });

    it('flushes at once when `most` items wait', async () => {
      vi.useFakeTimers();
      const { commit, flushes } = controlled({ linger: 200, most: 3 });
      const added = [commit.add(1), commit.add(2)];
      await vi.advanceTimersByTimeAsync(10);
      expect(flushes).toEqual([]);
      added.push(commit.add(3));
      await vi.advanceTimersByTimeAsync(0);
      expect(flushes.map((f) => f.items)).toEqual([[1, 2, 3]]);
      flushes[0]!.end();
      expect(await Promise.all(added)).toEqual([10, 20, 30]);
    });

    it('flushes a waiting group at once when asked for idle (as a store closing does)', async () => {
      vi.useFakeTimers();
      const { commit, flushes } = controlled({ linger: 60_000 });
      const added = commit.add(1);
      const idle = commit.idle();
      await vi.advanceTimersByTimeAsync(0);
      expect(flushes.map((f) => f.items)).toEqual([[1]]);
      flushes[0]!.end();
      await idle;
      await expect(added).resolves.toBe(10);
    });

    it('does not keep the process alive while a group waits', async () => {
      const timeouts = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
      const before = timeouts();
      const { commit, flushes } = controlled({ linger: 60_000 });
      const added = commit.add(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(flushes).toEqual([]);
      // A timer the process waits for is listed here; an unref'd one is not.
      expect(timeouts()).toBe(before);
      const idle = commit.idle();
      await new Promise((resolve) => setImmediate(resolve));
      flushes[0]!.end();
      await Promise.all([idle, added]);
    });
  });
});
