// The window's app info and current tree. The outline is reloaded after each command the window
// runs and whenever `TreeChanged` carries a seq newer than the one on screen, and reloads never
// overlap. The first outline is asked for as the script starts (`main.tsx`), since on a large
// tree that read is most of what opening waits for. A database that the quick check, run beside
// the opening, finds damaged fails the load as a database found damaged at start does: the
// listener is registered before the app info is asked for, so the news cannot fall between them.
// A large tree's preview (its top levels, `OutlinePreview`), asked for beside the first outline,
// is held in the loading state until the outline comes, for the graph to draw meanwhile.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Answer, Backend } from "./backend";
import type { ApiError, AppInfo, TreeOutline_Serialize as TreeOutline } from "./bindings";
import { markOnce } from "./marks";
import type { PreviewOutline } from "./outline";

export type Load =
  { state: "loading" } | { state: "ready"; info: AppInfo } | { state: "failed"; error: ApiError };

/** The current tree as the window knows it. */
export type TreeLoad =
  | { state: "loading"; preview?: PreviewOutline }
  | { state: "none" }
  | { state: "ready"; outline: TreeOutline }
  | { state: "failed"; error: ApiError };

/**
 * The app info and the current tree, read from `backend` and followed; `firstOutline`, when given,
 * is the outline already asked for, which the first load takes instead of asking again, and
 * `firstPreview` the preview asked for beside it.
 */
export function useTreeLoad(
  backend: Backend,
  firstOutline?: Promise<Answer<TreeOutline>>,
  firstPreview?: Promise<Answer<PreviewOutline | null>>,
) {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  const [tree, setTree] = useState<TreeLoad>({ state: "loading" });
  // The seq of the outline on screen, and whether a reload is running or owed, kept in refs so
  // the change listener (registered once) always sees the current values.
  const shownSeq = useRef(-1);
  const reloading = useRef<"idle" | "running" | "owed">("idle");
  const asked = useRef(firstOutline ?? null);

  const reload = async () => {
    if (reloading.current !== "idle") {
      reloading.current = "owed";
      return;
    }
    reloading.current = "running";
    for (;;) {
      // Marks for the benchmark's account of opening a large tree (tests/bench).
      markOnce("flame:outline-asked");
      const answer = asked.current ?? backend.outline(null);
      asked.current = null;
      const result = await answer;
      markOnce("flame:outline-received");
      if (result.status === "ok") {
        shownSeq.current = result.data.seq;
        setTree({ state: "ready", outline: result.data });
      } else if (result.error.code === "not_found") {
        setTree({ state: "none" });
      } else {
        setTree({ state: "failed", error: result.error });
      }
      // Another reload was asked for while this one ran (`reload` sets it): read again.
      if ((reloading.current as string) === "owed") {
        reloading.current = "running";
        continue;
      }
      reloading.current = "idle";
      return;
    }
  };

  useEffect(() => {
    void firstPreview?.then((answer) => {
      if (answer.status !== "ok" || answer.data === null) return;
      const preview = answer.data;
      markOnce("flame:preview-received");
      // Only while nothing else is known: the outline may have come first.
      setTree((now) => (now.state === "loading" ? { state: "loading", preview } : now));
    });
  }, [firstPreview]);

  useEffect(() => {
    let live = true;
    let unlisten: (() => void) | null = null;
    let unlistenDamage: (() => void) | null = null;
    let damaged = false;
    void backend
      .onDatabaseDamaged((error) => {
        damaged = true;
        setLoad({ state: "failed", error });
      })
      .then((stop) => (live ? (unlistenDamage = stop) : stop()));
    void backend.appInfo().then((result) => {
      if (!live || damaged) return;
      if (result.status === "ok") {
        setLoad({ state: "ready", info: result.data });
        void reload();
        void backend
          .onTreeChanged((seq) => {
            if (seq > shownSeq.current) void reload();
          })
          .then((stop) => (live ? (unlisten = stop) : stop()));
      } else {
        setLoad({ state: "failed", error: result.error });
      }
    });
    return () => {
      live = false;
      unlisten?.();
      unlistenDamage?.();
    };
  }, [backend]);

  return { load, tree, reload };
}
