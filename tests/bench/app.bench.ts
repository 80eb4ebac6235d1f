// The app's own figures: the size of the binary `make package` ships, the memory all of the
// app's processes hold once the window is drawn and idle, on a new data directory and with the
// 100k-frame tree open, and how much longer the window takes to open on the 100k-frame tree than
// on a new data directory (app.open_100k_ratio: both opened in turn in one run, so that what the
// machine is doing meanwhile weighs on both alike), each held to its goal. Prints
// `BENCH <name> <value> <unit>` lines on stdout and each process's share on stderr. Run under Xvfb
// by `make bench`, which builds the shipped binaries first (scripts/package.sh --binaries) and
// runs the window of the shipped app (FLAME_APP); without FLAME_APP the window is the release
// build's, like the other UI benchmarks'.
//
// Memory is the sum over the app's process tree: the Tauri shell (flame-desktop) and every process
// under it (WebKitGTK's web process and network process). The BENCH lines sum PSS, not RSS: the
// shell and WebKit's processes map the same WebKitGTK, GTK, GLib and Mesa libraries, and RSS
// counts each shared page once per process that maps it, so a sum of RSS counts those libraries
// two or three times; PSS charges a shared page to each process in proportion, so the sum is
// what the app as a whole keeps resident. Both are printed on stderr, per process. PSS divides a
// page among every process that maps it, other programs' too: beside another WebKitGTK program
// (another window under test) the figure reads tens of MiB lower, so `make bench` runs one window
// at a time and a figure taken on a busy machine is not comparable. Memory is in
// MiB (2^20 bytes, what /proc's kB are counted in); the binary's size is in MB (10^6 bytes, as
// the issue gives it).

import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { describe, expect, it } from "vitest";

import { APP_BINARY, withApp, type App } from "../e2e/harness";
import { scaleFixture } from "./fixture";
import { framesPainted, median, timeOpening, type Opening } from "./opening";
import { processesOf } from "./process-start";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** The programs the package ships, as scripts/package.sh builds them. */
const SHIPPED = process.env["FLAME_SHIPPED_DIR"] ?? join(REPO, "target/package/dist");

const MIB = 1024 * 1024;

// The goals the app is held to (issue 19), in the units the issue states them: megabytes.
/** The shipped window's binary. */
const MAX_BINARY_BYTES = 15e6;
/** Every process of the app, idle on a new data directory. */
const MAX_IDLE_BYTES = 250e6;
/** Every process of the app, idle with the 100k-frame tree open. */
const MAX_OPEN_100K_BYTES = 400e6;
/** Opening on the 100k-frame tree, against opening on a new data directory (issue 39). */
const MAX_OPEN_100K_RATIO = 1.25;
/** Openings of each kind the ratio takes the medians of. */
const OPENINGS = 3;

function line(name: string, value: number, unit: string) {
  process.stdout.write(`BENCH ${name} ${value.toFixed(1)} ${unit}\n`);
}

/** One process's resident memory, from /proc/PID/smaps_rollup, in bytes. */
interface Resident {
  pid: number;
  name: string;
  rss: number;
  pss: number;
}

/** The shell and every process under it, whatever their depth. */
function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name is in parentheses and may itself hold spaces and parentheses, so the
      // fields are read after the last ")"; the parent is the second of them.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // The process ended while the list was read.
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  }
  return tree;
}

function resident(pid: number): Resident | undefined {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0);
    const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    return { pid, name, rss: kib("Rss") * 1024, pss: kib("Pss") * 1024 };
  } catch {
    return undefined;
  }
}

const sum = (processes: Resident[], key: "rss" | "pss") =>
  processes.reduce((total, p) => total + p[key], 0);

/**
 * Waits until the app is idle — its total PSS moved by less than 2 MiB over the last five
 * seconds, sampled every second, and never less than ten seconds after the window was drawn
 * (WebKit settles its caches a few seconds after the first paint) — and returns the last sample.
 * Gives up waiting after a minute and returns what it has.
 */
async function idleMemory(app: App): Promise<Resident[]> {
  const shell = processesOf(APP_BINARY, `FLAME_HOME=${app.home}`).at(-1);
  if (shell === undefined) throw new Error(`no ${APP_BINARY} runs on ${app.home}`);
  const deadline = Date.now() + 60_000;
  const started = Date.now();
  const totals: number[] = [];
  for (;;) {
    await new Promise((r) => setTimeout(r, 1_000));
    const processes = processTree(shell)
      .map(resident)
      .filter((r): r is Resident => r !== undefined);
    totals.push(sum(processes, "pss"));
    const recent = totals.slice(-6);
    const settled = recent.length === 6 && Math.max(...recent) - Math.min(...recent) < 2 * MIB;
    if ((settled && Date.now() - started >= 10_000) || Date.now() > deadline) return processes;
  }
}

function report(label: string, processes: Resident[]) {
  const mib = (bytes: number) => (bytes / MIB).toFixed(1);
  for (const p of processes) {
    process.stderr.write(
      `${label}: ${p.name} (${p.pid}): RSS ${mib(p.rss)} MiB, PSS ${mib(p.pss)} MiB\n`,
    );
  }
  process.stderr.write(
    `${label}: all ${processes.length} processes: RSS ${mib(sum(processes, "rss"))} MiB, PSS ${mib(sum(processes, "pss"))} MiB\n`,
  );
}

describe("the app", () => {
  it("is small on disk", () => {
    for (const program of ["flame-desktop", "flame"]) {
      process.stderr.write(
        `${join(SHIPPED, program)}: ${statSync(join(SHIPPED, program)).size} bytes\n`,
      );
    }
    const size = statSync(join(SHIPPED, "flame-desktop")).size;
    line("app.binary_size", size / 1e6, "MB");
    expect(size, "the shipped binary's size in bytes").toBeLessThanOrEqual(MAX_BINARY_BYTES);
  });

  it("holds little memory when idle on a new data directory", async () => {
    // A new data directory: the first start, with the sample tree a new person sees.
    await withApp("app idle memory", async (app) => {
      await app.find("[data-testid=focused-frame]");
      const processes = await idleMemory(app);
      report("idle", processes);
      line("app.idle_rss", sum(processes, "pss") / MIB, "MiB");
      expect(sum(processes, "pss"), "idle memory in bytes").toBeLessThanOrEqual(MAX_IDLE_BYTES);
    });
  });

  it("holds little memory with the 100k-frame tree open", async () => {
    const fixture = await scaleFixture();
    await withApp(
      "app memory 100k",
      async (app) => {
        await framesPainted(app.driver, "whole");
        const processes = await idleMemory(app);
        report("100k", processes);
        line("app.open_100k_rss", sum(processes, "pss") / MIB, "MiB");
        expect(sum(processes, "pss"), "memory with the tree open, in bytes").toBeLessThanOrEqual(
          MAX_OPEN_100K_BYTES,
        );
      },
      { prepareHome: () => Promise.resolve(fixture.home) },
    );
  });

  it("opens on the 100k-frame tree nearly as fast as on a new data directory", async () => {
    const fixture = await scaleFixture();
    const opened: { new: Opening[]; large: Opening[] } = { new: [], large: [] };
    for (let k = 0; k < OPENINGS; k++) {
      await withApp("app open new", async (app) => {
        opened.new.push(await timeOpening(app, `ratio: open new ${k + 1}`));
      });
      await withApp(
        "app open 100k",
        async (app) => {
          opened.large.push(await timeOpening(app, `ratio: open 100k ${k + 1}`));
        },
        { prepareHome: () => Promise.resolve(fixture.home) },
      );
    }
    const ratioOf = (which: keyof Opening) =>
      median(opened.large.map((o) => o[which])) / median(opened.new.map((o) => o[which]));
    // The whole tree's first paint, after the preview's on the 100k-frame tree, has no goal: it
    // is printed so that what the preview hides stays in sight.
    process.stdout.write(`BENCH app.open_100k_whole_ratio ${ratioOf("whole").toFixed(2)} x\n`);
    const ratio = ratioOf("first");
    process.stdout.write(`BENCH app.open_100k_ratio ${ratio.toFixed(2)} x\n`);
    expect(ratio, "the 100k-frame opening over the new one").toBeLessThanOrEqual(
      MAX_OPEN_100K_RATIO,
    );
  });
});
