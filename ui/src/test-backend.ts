// A fake backend for unit tests: every command is refused unless a test answers it.

import type { Backend } from "./backend";
import type { PreviewOutline } from "./outline";
import type {
  ApiError,
  AppInfo,
  ApprovalPolicy_Serialize as ApprovalPolicy,
  ChatView_Serialize as ChatView,
  FileTrail,
  FrameActions_Serialize as FrameActions,
  FrameDetail_Serialize as FrameDetail,
  FrameOutline_Serialize as FrameOutline,
  GatewayStatus_Serialize as GatewayStatus,
  Message_Serialize as Message,
  ToolCall,
  TreeOutline_Serialize,
  WaitingRequest,
} from "./bindings";

export const INFO: AppInfo = {
  version: "0.1.0",
  data_dir: "/tmp/flame-home",
  data_dir_source: "flame_home",
  database_path: "/tmp/flame-home/flame.db",
  schema_version: 1,
};

/** The gateway as a window whose settings leave it off sees it. */
export const GATEWAY_OFF: GatewayStatus = {
  settings: { on: false, port: 8788, mode: "observe" },
  listening: null,
  anthropic_upstream: "https://api.anthropic.com",
  openai_upstream: "https://api.openai.com/v1",
  clients: [],
  problem: null,
};

export const NO_TREE: ApiError = { code: "not_found", message: "there is no tree yet" };

function isApiError(value: unknown): value is ApiError {
  return typeof value === "object" && value !== null && "code" in value && "message" in value;
}

/** A stored message of `frame` with `content`: a closed one of one token, with nothing else
 * unless `extra` says so. */
export function storedMessage(
  id: number,
  frame: string,
  role: Message["role"],
  content: string,
  extra: Partial<Message> = {},
): Message {
  return {
    id,
    frame,
    role,
    content,
    tool_calls: null,
    tool_result: null,
    tokens: 1,
    model: null,
    usage: null,
    created_at: 0,
    interrupted: false,
    ...extra,
  };
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
    outlinePreview: () => answer<PreviewOutline | null>(null),
    frameCost: refuse,
    setFrameBudget: refuse,
    createTree: refuse,
    listTrees: () => answer([]),
    search: () => answer([]),
    deleteTree: refuse,
    focusFrame: refuse,
    pushFrame: refuse,
    planFrames: refuse,
    moveFrame: refuse,
    startFrame: refuse,
    popFrame: refuse,
    resumeFrame: refuse,
    retryFrame: refuse,
    retryFrameFromStart: refuse,
    invalidateFrame: refuse,
    editFrame: refuse,
    deleteFrame: refuse,
    frameView: refuse,
    earlierMessages: refuse,
    frameDetail: refuse,
    frameContext: refuse,
    rebuildContext: refuse,
    cancelAnswer: () => Promise.resolve(false),
    generateResults: refuse,
    getSettings: refuse,
    saveSettings: refuse,
    listModels: refuse,
    mcpServers: () => answer([]),
    findMcpServers: refuse,
    sendMessage: refuse,
    answerRequest: refuse,
    answerAgain: refuse,
    importFile: refuse,
    exportFrames: refuse,
    exportContext: refuse,
    chooseSavePath: refuse,
    chooseFolder: refuse,
    setTreeWorkspace: refuse,
    frameChanges: refuse,
    rollbackFrame: refuse,
    checkpointStorage: () => answer([]),
    sessions: refuse,
    followSession: refuse,
    unfollowSession: refuse,
    followAgent: refuse,
    gatewayStatus: () => answer(GATEWAY_OFF),
    setGateway: refuse,
    gatewaySessions: () => answer([]),
    gatewayFrame: () => answer(null),
    onTreeChanged: () => Promise.resolve(() => undefined),
    onDatabaseDamaged: () => Promise.resolve(() => undefined),
    onFollowRead: () => Promise.resolve(() => undefined),
    onGatewayCalled: () => Promise.resolve(() => undefined),
    ...parts,
  };
}

/** What may be done with an in-progress frame that has no children and a parent. */
export const IN_PROGRESS_ACTIONS: FrameActions = {
  push: true,
  plan: true,
  pop: true,
  start: false,
  resume: false,
  retry: false,
  invalidate: true,
  edit: false,
  move: false,
  delete: false,
  chat: true,
  start_target: null,
};

/** A frame as the fake `frameView` reads it. */
export interface StoredFrame {
  frame: FrameDetail;
  /** Its stored messages, oldest first. */
  messages: Message[];
  /** The ids of its replies still open, whose content may still change. */
  open: number[];
  /** The call the agent waits on there for the person, with what to ask about it. */
  waiting: WaitingRequest | null;
  /** The newest event seq. */
  seq: number;
}

/** How many messages a view that starts over returns: flame-api's `MESSAGE_PAGE`. */
export const MESSAGE_PAGE = 200;

/**
 * The `frameView` command over `stored()`, read on every call so a test can change it, answered
 * by the backend's rule (see `FrameView` in bindings.ts): the messages after `after`; or, when
 * `after` is not one of them or an open reply is not after it, the newest `MESSAGE_PAGE` (from
 * the first open reply if that is further back) with how many come before them; settled up to
 * the first open reply.
 */
export function frameViewOf(stored: () => StoredFrame): Backend["frameView"] {
  return (_id, after) => {
    const { frame, messages, open, waiting, seq } = stored();
    const firstOpen = Math.min(Infinity, ...open);
    const kept =
      after !== null && messages.some((m) => m.id === after) && firstOpen > after ? after : null;
    let fresh = messages.filter((m) => kept === null || m.id > kept);
    let earlier = 0;
    if (kept === null) {
      const from = Math.min(
        Math.max(0, messages.length - MESSAGE_PAGE),
        ...messages.flatMap((m, k) => (m.id === firstOpen ? [k] : [])),
      );
      fresh = messages.slice(from);
      earlier = from;
    }
    const settled = fresh.filter((m) => m.id < firstOpen).map((m) => m.id);
    return answer<ChatView>({
      frame,
      seq,
      kept_through: kept,
      messages: fresh,
      settled_through: settled.length > 0 ? Math.max(...settled) : kept,
      waiting_request: waiting,
      earlier,
    });
  };
}

/**
 * The `earlierMessages` command over `messages()`, by the backend's rule: the newest
 * `MESSAGE_PAGE` before `before`; with `reach`, every one from half a page before it, or none
 * when it is not one of them.
 */
export function earlierMessagesOf(messages: () => Message[]): Backend["earlierMessages"] {
  return (_id, before, reach) => {
    const all = messages();
    const end = all.filter((m) => m.id < before).length;
    let start = Math.max(0, end - MESSAGE_PAGE);
    if (reach !== null) {
      const at = all.slice(0, end).findIndex((m) => m.id === reach);
      start = at < 0 ? end : Math.max(0, at - MESSAGE_PAGE / 2);
    }
    return answer({ messages: all.slice(start, end), earlier: start === end ? 0 : start });
  };
}

/** Calls made to a backend, by name, in the order they were made. */
export type CallLog = string[];

/** `backend` with every call written to the returned log, so a test can count IPC reads. */
export function countingBackend(backend: Backend): { backend: Backend; calls: CallLog } {
  const calls: CallLog = [];
  const counted = { ...backend } as Record<string, unknown>;
  for (const [name, method] of Object.entries(backend)) {
    if (typeof method !== "function") continue;
    counted[name] = (...args: unknown[]): unknown => {
      calls.push(name);
      return (method as (...a: unknown[]) => unknown)(...args);
    };
  }
  return { backend: counted as Backend, calls };
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
    started_at: null,
    ended_at: null,
    message_count: 0,
    tokens: 0,
    rolled_back_at: null,
    ...more,
  };
}

/** The approval policy Flame starts with: reading automatic, changing and running asked. */
export const DEFAULT_APPROVAL: ApprovalPolicy = { read: "auto", change: "ask", run: "ask" };

/** The file trail of a frame whose tool calls touched no file. */
export const NO_FILES: FileTrail = { read: [], changed: [] };

/** A push or pop the agent waits on, as the backend asks about it. */
export function frameChange(call: ToolCall): WaitingRequest {
  return { call, ask: { kind: "frame_change" } };
}
