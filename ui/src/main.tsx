import { Channel } from "@tauri-apps/api/core";
import { render } from "preact";

import { App } from "./app";
import type { Backend, ChatListener } from "./backend";
import {
  commands,
  events,
  type ChatEvent,
  type ExportProgress,
  type ImportProgress,
} from "./bindings";
import { installBenchHooks } from "./flame-graph/bench";
import { withApiErrors } from "./ipc-errors";
import { markOnce } from "./marks";
import { expandOutline, expandPreview } from "./outline";

const root = document.getElementById("app");
if (root === null) {
  throw new Error("index.html has no #app element");
}
/** A channel that hands every event of one reply to `listener`. */
function channelTo(listener: ChatListener): Channel<ChatEvent> {
  const channel = new Channel<ChatEvent>();
  channel.onmessage = listener;
  return channel;
}

const typed = withApiErrors(commands);
const backend: Backend = {
  ...typed,
  outline: async (tree) => {
    const answer = await typed.outline(tree);
    return answer.status === "ok" ? { status: "ok", data: expandOutline(answer.data) } : answer;
  },
  outlinePreview: async () => {
    const answer = await typed.outlinePreview();
    if (answer.status !== "ok") return answer;
    return { status: "ok", data: answer.data === null ? null : expandPreview(answer.data) };
  },
  sendMessage: (frame, text, model, listener) =>
    typed.sendMessage(frame, text, model, channelTo(listener)),
  answerAgain: (frame, model, listener) => typed.answerAgain(frame, model, channelTo(listener)),
  answerRequest: (frame, answer, model, listener) =>
    typed.answerRequest(frame, answer, model, channelTo(listener)),
  onTreeChanged: (listener) => events.treeChanged.listen((event) => listener(event.payload.seq)),
  onDatabaseDamaged: (listener) =>
    events.databaseDamaged.listen((event) => listener(event.payload.error)),
  onFollowRead: (listener) =>
    events.followRead.listen((event) =>
      listener({
        ...event.payload,
        problem: event.payload.problem ?? null,
        budget_notice: event.payload.budget_notice ?? null,
      }),
    ),
  onGatewayCalled: (listener) =>
    events.gatewayCalled.listen((event) =>
      listener({ ...event.payload, refused: event.payload.refused ?? null }),
    ),
  importFile: (path, onProgress) => {
    const channel = new Channel<ImportProgress>();
    channel.onmessage = onProgress;
    return typed.importSession(path, channel);
  },
  exportFrames: (id, scope, format, path, onProgress) => {
    const channel = new Channel<ExportProgress>();
    channel.onmessage = onProgress;
    return typed.exportFrames(id, scope, format, path, channel);
  },
};
// Reading the tree's outline is most of what a window opening on a large tree waits for, so it
// is asked for as the script starts, alongside the app's first reads, rather than after them;
// a large tree's preview, which the graph draws until then, first.
const firstPreview = backend.outlinePreview();
markOnce("flame:outline-asked");
const firstOutline = backend.outline(null);
render(<App backend={backend} firstOutline={firstOutline} firstPreview={firstPreview} />, root);

// The benchmark's entry points, for tests/bench (make bench), only in the bench build of the UI
// (`vite build --mode bench`): in the product build the condition is false when Vite compiles it,
// so the benchmark's code is left out of the bundle (vite.config.ts checks that it is).
if (import.meta.env.MODE === "bench") installBenchHooks(() => typed.outline(null));
