// When a process started, in milliseconds since the epoch, from Linux's /proc: the benchmark of
// opening the window compares it with the time the page records for its first paint
// (`performance.timeOrigin + performance.now()`, the same wall clock).
//
// /proc/PID/stat gives the start in clock ticks since boot (10 ms each), and /proc/uptime how
// long ago boot was (to 10 ms), read next to `Date.now()`; the result is good to about 20 ms.

import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

const CLOCK_TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());

/** The processes running `binary` whose environment has `NAME=value`, newest last. */
export function processesOf(binary: string, env: string): number[] {
  const found: { pid: number; start: number }[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      if (readlinkSync(`/proc/${pid}/exe`) !== binary) continue;
      if (!readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(env)) continue;
      found.push({ pid, start: startTicks(pid) });
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found.sort((a, b) => a.start - b.start).map((p) => p.pid);
}

function startTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Field 22, starttime, is the 20th after the name.
  return Number(fields[19]);
}

/** When process `pid` started, in milliseconds since the epoch. */
export function startedAt(pid: number): number {
  const ticks = startTicks(pid);
  const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  const now = Date.now();
  const bootedAt = now - uptime * 1000;
  return bootedAt + (ticks / CLOCK_TICKS_PER_SECOND) * 1000;
}
