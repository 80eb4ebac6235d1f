import { defineConfig } from "vitest/config";

// The UI benchmark drives the real window like the end-to-end tests, once; its output lines go
// straight to stdout so `make bench` can collect them.
export default defineConfig({
  test: {
    root: "tests/bench",
    include: ["**/*.bench.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 900_000,
    hookTimeout: 60_000,
    disableConsoleIntercept: true,
  },
});
