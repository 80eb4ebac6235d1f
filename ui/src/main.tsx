import { Channel } from "@tauri-apps/api/core";
import { render } from "preact";

import { App } from "./app";
import type { Backend } from "./backend";
import { commands, events, type ImportProgress } from "./bindings";
import { runBench } from "./flame-graph/bench";

const root = document.getElementById("app");
if (root === null) {
  throw new Error("index.html has no #app element");
}
const backend: Backend = {
  ...commands,
  onTreeChanged: (listener) =>
    events.treeChanged.listen((event) => listener(event.payload.seq ?? 0)),
  importFile: (path, onProgress) => {
    const channel = new Channel<ImportProgress>();
    channel.onmessage = onProgress;
    return commands.importSession(path, channel);
  },
};
render(<App backend={backend} />, root);

// The benchmark's entry point, called through WebDriver by tests/bench (make bench).
declare global {
  interface Window {
    __flameBench?: typeof runBench;
  }
}
window.__flameBench = runBench;
