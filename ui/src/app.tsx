import { useEffect, useState } from "preact/hooks";

import type { Backend } from "./backend";
import type { ApiError, AppInfo } from "./bindings";
import { StartupError } from "./startup-error";
import { StatusBar } from "./status-bar";

type Load =
  | { state: "loading" }
  | { state: "ready"; info: AppInfo }
  | { state: "failed"; error: ApiError };

/** The whole window: the two panes and the status bar, or the startup error. */
export function App({ backend }: { backend: Backend }) {
  const [load, setLoad] = useState<Load>({ state: "loading" });

  useEffect(() => {
    let live = true;
    void backend.appInfo().then((result) => {
      if (!live) return;
      setLoad(
        result.status === "ok"
          ? { state: "ready", info: result.data }
          : { state: "failed", error: result.error },
      );
    });
    return () => {
      live = false;
    };
  }, [backend]);

  if (load.state === "failed") {
    return <StartupError error={load.error} />;
  }
  return (
    <div class="window">
      <main class="panes">
        <section class="pane graph-pane" aria-label="Flame graph" data-testid="graph-pane">
          <header class="pane-header">Flame graph</header>
          <div class="empty-state">
            <p class="empty-title">No frames yet</p>
            <p>The current tree is drawn here as a flame graph, root on top.</p>
          </div>
        </section>
        <section class="pane chat-pane" aria-label="Chat" data-testid="chat-pane">
          <header class="pane-header">Chat</header>
          <div class="empty-state">
            <p class="empty-title">No frame in focus</p>
            <p>The conversation of the focused frame appears here.</p>
          </div>
        </section>
      </main>
      <StatusBar info={load.state === "ready" ? load.info : null} />
    </div>
  );
}
