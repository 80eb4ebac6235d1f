import { defineConfig } from "vitest/config";

// Unit tests of the UI, in a simulated DOM; the backend is always a fake passed in.
export default defineConfig({
  root: "ui",
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
