// A fake backend for unit tests: every command is refused unless a test answers it.

import type { Backend } from "./backend";
import type {
  ApiError,
  AppInfo,
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize,
} from "./bindings";

export const INFO: AppInfo = {
  version: "0.1.0",
  data_dir: "/tmp/flame-home",
  data_dir_source: "flame_home",
  database_path: "/tmp/flame-home/flame.db",
  schema_version: 1,
};

export const NO_TREE: ApiError = { code: "not_found", message: "there is no tree yet" };

function isApiError(value: unknown): value is ApiError {
  return typeof value === "object" && value !== null && "code" in value && "message" in value;
}

/** A command's answer: an error when `value` is an ApiError, else the data. */
export function answer<T>(
  value: T | ApiError,
): Promise<{ status: "ok"; data: T } | { status: "error"; error: ApiError }> {
  return Promise.resolve(
    isApiError(value) ? { status: "error", error: value } : { status: "ok", data: value },
  );
}

/** A backend whose every command fails unless `parts` answers it. */
export function fakeBackend(parts: Partial<Backend>): Backend {
  const refuse = () => answer<never>({ code: "internal", message: "not part of this test" });
  return {
    appInfo: () => answer(INFO),
    outline: () => answer<TreeOutline_Serialize>(NO_TREE),
    createTree: refuse,
    listTrees: () => answer([]),
    deleteTree: refuse,
    focusFrame: refuse,
    pushFrame: refuse,
    planFrames: refuse,
    moveFrame: refuse,
    startFrame: refuse,
    popFrame: refuse,
    resumeFrame: refuse,
    retryFrame: refuse,
    invalidateFrame: refuse,
    editFrame: refuse,
    deleteFrame: refuse,
    frameDetail: refuse,
    frameMessages: refuse,
    frameContext: refuse,
    cancelAnswer: () => Promise.resolve(false),
    generateResults: refuse,
    getSettings: refuse,
    saveSettings: refuse,
    sendMessage: refuse,
    answerRequest: refuse,
    answerAgain: refuse,
    waitingRequest: () => answer(null),
    importFile: refuse,
    exportFrames: refuse,
    exportContext: refuse,
    chooseSavePath: refuse,
    onTreeChanged: () => Promise.resolve(() => undefined),
    ...parts,
  };
}

/** Lets every pending promise of the fake backend, and the renders they cause, run. */
export async function settle() {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A frame as the outline lists it: in progress, first among its siblings, titled by its id, no
 * messages or tokens, unless `more` says otherwise. */
export function outlineFrame(
  id: string,
  parent: string | null,
  more: Partial<FrameOutline> = {},
): FrameOutline {
  return {
    id,
    parent,
    position: 0,
    title: id,
    status: "in_progress",
    success_criteria_compacted: null,
    retry_of: null,
    created_at: 0,
    started_at: null,
    ended_at: null,
    message_count: 0,
    tokens: 0,
    ...more,
  };
}
