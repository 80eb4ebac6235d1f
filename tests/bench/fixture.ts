// The benchmarks' large data directory: a generated Flame export (`flame_import::scale`, through
// its `scale_export` example) imported by the release `flame` command line, exactly as a person
// would import a file. Both are kept under target/scale/, named by the generator's parameters, so
// the import runs once per set of parameters, not once per benchmark run.
//
// A data directory is made under a temporary name and renamed into place once the import has
// succeeded: a run stopped halfway leaves nothing that a later run would take for finished.

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SCALE = join(REPO, "target/scale");

/** The release `flame` binary: $FLAME_CLI, else target/release/flame. */
export const RELEASE_CLI = process.env["FLAME_CLI"] ?? join(REPO, "target/release/flame");

/** What the generator is asked for (its own defaults for the rest: a 40-frame chain). */
export interface ScaleParameters {
  frames: number;
  messages: number;
  seed: number;
}

/** The tree: 100k frames and 200k messages. */
export const SCALE_100K: ScaleParameters = { frames: 100_000, messages: 200_000, seed: 19 };

export interface ScaleFixture {
  /** The data directory holding the imported tree (its only tree, and the current one). */
  home: string;
  /** The export it was imported from. */
  export: string;
  parameters: ScaleParameters;
}

function key(p: ScaleParameters): string {
  return `${p.frames}f-${p.messages}m-s${p.seed}`;
}

/** Writes the export for `p` unless it is there (the generator renames it into place whole). */
function writeExport(p: ScaleParameters, file: string): void {
  if (existsSync(file)) return;
  execFileSync(
    "cargo",
    [
      "run",
      "--release",
      "--quiet",
      "--locked",
      "-p",
      "flame-import",
      "--features",
      "scale",
      "--example",
      "scale_export",
      "--",
      "--frames",
      String(p.frames),
      "--messages",
      String(p.messages),
      "--seed",
      String(p.seed),
      "--out",
      file,
    ],
    { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] },
  );
}

/**
 * The data directory for `p`, made if it is not cached: the export written by the generator,
 * then `flame --home DIR import FILE`. Benchmarks open it as it is (the window only reads a tree
 * to draw it), so they must not change its trees. $FLAME_SCALE_HOME names a data directory to
 * open instead, such as a copy kept at an older schema version to measure an older build on.
 */
export async function scaleFixture(p: ScaleParameters = SCALE_100K): Promise<ScaleFixture> {
  await mkdir(SCALE, { recursive: true });
  const file = join(SCALE, `export-${key(p)}.json`);
  const given = process.env["FLAME_SCALE_HOME"];
  if (given !== undefined && given !== "")
    return { home: resolve(given), export: file, parameters: p };
  const home = join(SCALE, `home-${key(p)}`);
  if (existsSync(home)) return { home, export: file, parameters: p };
  if (!existsSync(RELEASE_CLI)) {
    throw new Error(
      `${RELEASE_CLI} does not exist: build it first (cargo build --release -p flame-cli)`,
    );
  }
  writeExport(p, file);
  const making = `${home}.making-${process.pid}`;
  await rm(making, { recursive: true, force: true });
  const started = performance.now();
  execFileSync(RELEASE_CLI, ["--home", making, "import", file], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  process.stderr.write(
    `fixture: imported ${p.frames} frames and ${p.messages} messages into ${home} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  try {
    await rename(making, home);
  } catch (err) {
    // Another run finished the same directory first: keep its copy.
    await rm(making, { recursive: true, force: true });
    if (!existsSync(home)) throw err;
  }
  return { home, export: file, parameters: p };
}
