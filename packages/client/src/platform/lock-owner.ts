import { readFileSync } from 'node:fs';

/**
 * When process `pid` started, as Linux tells it (boot id and start time in clock ticks since
 * boot), or undefined where that cannot be read (no `/proc`, another user's process hidden, or
 * gone). Two processes given the same id one after the other (PID 1 in every container, or ids
 * reused after a reboot) never have the same start.
 */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `${bootId()}:${fields[19]}`;
  } catch {
    return undefined;
  }
}

let boot: string | undefined;
function bootId(): string {
  if (boot === undefined) {
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      boot = '';
    }
  }
  return boot;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a lock file holds for this process: its id, then (on Linux) when it started. */
export function ownerText(): string {
  const start = startOf(process.pid);
  return start === undefined ? String(process.pid) : `${process.pid}\n${start}`;
}

/**
 * The id of the live process that wrote `text` ({@link ownerText}) into a lock, or undefined when
 * that process is gone and the lock can be taken over. A process id alone would keep a lock left by
 * a killed process for good once its id is someone's again: a container's next PID 1, or any
 * process after a reboot. A lock of this process (its id and start) is live: another part of it
 * holds the lock.
 */
export function liveOwner(text: string): number | undefined {
  const [first = '', start] = text.split('\n');
  const pid = Number(first.trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const now = startOf(pid);
  if (start !== undefined && start !== '' && now !== undefined) return start === now ? pid : undefined;
  // Written without a start (by an earlier version, or where it cannot be read): by this process
  // only if its start cannot be read either, since it writes one where it can.
  if (pid === process.pid) return now === undefined ? pid : undefined;
  return alive(pid) ? pid : undefined;
}
