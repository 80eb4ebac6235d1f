// The slice of the generated command bindings the UI uses, plus the one event it follows.
// Components take it as a prop, so tests pass a fake and the app passes the real `commands`
// and `events` from bindings.ts (see main.tsx).
import type { ApiError, ImportProgress, ImportSummary, commands } from "./bindings";

export type Backend = Pick<
  typeof commands,
  | "appInfo"
  | "outline"
  | "createTree"
  | "focusFrame"
  | "pushFrame"
  | "planFrames"
  | "moveFrame"
  | "startFrame"
  | "popFrame"
  | "resumeFrame"
  | "retryFrame"
  | "invalidateFrame"
  | "editFrame"
  | "deleteFrame"
> & {
  /** Calls `listener` with the newest event seq whenever the data directory changes. */
  onTreeChanged(listener: (seq: number) => void): Promise<() => void>;
  /**
   * Imports the session or export at `path` as a new tree (the `importSession` command), calling
   * `onProgress` as the backend reads it.
   */
  importFile(
    path: string,
    onProgress: (progress: ImportProgress) => void,
  ): Promise<{ status: "ok"; data: ImportSummary } | { status: "error"; error: ApiError }>;
};
