import { defineConfig } from "vitest/config";

// The MCP tests drive `flame mcp` through the official TypeScript SDK's client; no window.
export default defineConfig({
  test: {
    root: "tests/mcp",
    include: ["**/*.test.ts"],
    environment: "node",
    testTimeout: 60_000,
  },
});
