import { defineConfig } from "vitest/config";

// End-to-end tests drive the real app window, one at a time: each starts its own tauri-driver,
// WebKitWebDriver and Flame process on a fresh data directory. Run under Xvfb (see the Makefile).
export default defineConfig({
  test: {
    root: "tests/e2e",
    include: ["**/*.test.ts"],
    environment: "node",
    fileParallelism: false,
    maxConcurrency: 1,
    testTimeout: 60_000,
    // A test that fails is run once more before it counts. The real window under Xvfb sometimes
    // misses a step on a loaded machine (the palette's settings step once, in a CI run, and
    // never in ten runs since); a test that fails twice fails the run, with its message and
    // screenshot from the harness.
    retry: 1,
    hookTimeout: 60_000,
  },
});
