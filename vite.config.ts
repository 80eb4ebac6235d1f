import { defineConfig } from "vite";

// The UI lives in ui/ and is built into ui/dist, which the Tauri shell embeds (tauri.conf.json).
export default defineConfig({
  root: "ui",
  // Relative asset URLs work under Tauri's custom protocol and from a plain static server alike.
  base: "./",
  clearScreen: false,
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // WebKitGTK 2.50 is the oldest engine Flame runs in.
    target: "safari16",
  },
});
