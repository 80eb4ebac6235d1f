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
    hookTimeout: 60_000,
  },
});
