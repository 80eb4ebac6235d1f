import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { defineConfig, type Plugin } from "vite";

const REPO = dirname(fileURLToPath(import.meta.url));

/**
 * The modules only the benchmarks' build of the UI may hold: the hooks tests/bench calls through
 * WebDriver. `main.tsx` installs them under `import.meta.env.MODE === "bench"`, which Vite makes a
 * constant, so the product build leaves them out.
 */
const BENCH_ONLY = [resolve(REPO, "ui/src/flame-graph/bench.ts")];

/**
 * Fails the build when the product bundle holds a bench-only module, or when the bench bundle
 * lacks one (the benchmarks would find no hooks). The bundler lists in each chunk only the modules
 * whose code it kept, so a module imported but shaken out does not count.
 */
function benchCodeOnlyInBench(bench: boolean): Plugin {
  return {
    name: "flame-bench-code-only-in-bench",
    generateBundle(_options, bundle) {
      const kept = new Set(
        Object.values(bundle).flatMap((out) => (out.type === "chunk" ? out.moduleIds : [])),
      );
      for (const module of BENCH_ONLY) {
        if (!bench && kept.has(module))
          this.error(`the product bundle holds ${module}, which only the bench build may hold`);
        if (bench && !kept.has(module))
          this.error(`the bench bundle lacks ${module}: the benchmarks would find no hooks`);
      }
    },
  };
}

// The UI lives in ui/ and is built into ui/dist, which the Tauri shell embeds (tauri.conf.json).
// `vite build --mode bench` (npm run build:bench) builds the benchmarks' UI, with their hooks, into
// target/bench-ui instead, for the release build `make bench` measures.
export default defineConfig(({ mode }) => ({
  root: "ui",
  // Relative asset URLs work under Tauri's custom protocol and from a plain static server alike.
  base: "./",
  clearScreen: false,
  build: {
    outDir: mode === "bench" ? resolve(REPO, "target/bench-ui") : "dist",
    emptyOutDir: true,
    // WebKitGTK 2.50 is the oldest engine Flame runs in.
    target: "safari16",
  },
  plugins: [benchCodeOnlyInBench(mode === "bench")],
}));
