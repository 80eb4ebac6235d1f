import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { defineConfig } from "vitest/config";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

// The UI benchmark drives the real window like the end-to-end tests, once; its output lines go
// straight to stdout so `make bench` can collect them. It measures the release build (`make
// bench` builds it, embedding the bench build of the UI, whose hooks flame-graph.bench.ts calls)
// unless FLAME_APP and FLAME_CLI name other binaries.
export default defineConfig({
  test: {
    root: "tests/bench",
    include: ["**/*.bench.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 3_600_000,
    hookTimeout: 60_000,
    disableConsoleIntercept: true,
    env: {
      FLAME_APP: process.env["FLAME_APP"] ?? join(REPO, "target/release/flame-desktop"),
      FLAME_CLI: process.env["FLAME_CLI"] ?? join(REPO, "target/release/flame"),
    },
  },
});
