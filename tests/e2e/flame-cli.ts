// Runs the real `flame` command line on a test's data directory: to build trees before the
// window opens, to change them from "another process" while it is open, and to read the store
// back after the window acted.

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The `flame` binary under test: $FLAME_CLI, else the debug build. */
export const CLI_BINARY = process.env["FLAME_CLI"] ?? join(REPO, "target/debug/flame");

export interface StatusFrame {
  id: string;
  parent: string | null;
  position: number;
  title: string;
  status: string;
}

export interface Status {
  focus: string;
  frames: StatusFrame[];
}

/** Runs `flame --home HOME --json ARGS…` and returns its parsed output; throws if it fails. */
export function flame(home: string, ...args: string[]): unknown {
  if (!existsSync(CLI_BINARY)) {
    throw new Error(`${CLI_BINARY} does not exist: build it first (cargo build -p flame-cli)`);
  }
  const out = execFileSync(CLI_BINARY, ["--home", home, "--json", ...args], { encoding: "utf8" });
  return JSON.parse(out) as unknown;
}

/** Creates a frame with `args` (push or plan …) and returns its id. */
export function frameId(home: string, ...args: string[]): string {
  return (flame(home, ...args) as { id: string }).id;
}

export function status(home: string): Status {
  return flame(home, "status") as Status;
}

/** The titles of `parent`'s children, in position order. */
export function childTitles(home: string, parent: string): string[] {
  return status(home)
    .frames.filter((f) => f.parent === parent)
    .sort((a, b) => a.position - b.position)
    .map((f) => f.title);
}
