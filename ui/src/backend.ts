// The slice of the generated command bindings the UI uses, plus the events it follows.
// Components take it as a prop, so tests pass a fake and the app passes the real `commands`
// and `events` from bindings.ts (see main.tsx).
import type {
  ApiError,
  Answer_Deserialize as RequestAnswer,
  ChatEvent,
  ExportFormat,
  ExportProgress,
  ExportScope,
  ExportSummary,
  FollowRead_Serialize as FollowRead,
  GatewayCalled_Serialize as GatewayCalled,
  ImportProgress,
  ImportSummary,
  TreeId,
  TreeOutline_Serialize as TreeOutline,
  WindowCommand,
  commands,
} from "./bindings";
import type { PreviewOutline } from "./outline";

/** Receives the events of a reply as it streams. */
export type ChatListener = (event: ChatEvent) => void;

type CommandAnswer<K extends keyof typeof commands> = ReturnType<(typeof commands)[K]>;

/** What every command resolves to: its data, or the backend's `{code, message}` error. */
export type Answer<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

/**
 * The commands the UI wraps rather than calls as they are: they take a Tauri channel, or their
 * answer is reshaped (see main.tsx).
 */
type WrappedCommand =
  | "outline"
  | "outlinePreview"
  | "sendMessage"
  | "answerAgain"
  | "answerRequest"
  | "importSession"
  | "exportFrames";

/**
 * What the UI may call: every command the window is granted (`WindowCommand`, generated from
 * capabilities/default.json), so it can call no other.
 */
export type Backend = Pick<typeof commands, Exclude<WindowCommand, WrappedCommand>> & {
  /**
   * The tree `tree` (the current one when null) as the flame graph draws it: the `outline`
   * command's columns made into one `FrameOutline` per frame (`outline.ts`).
   */
  outline(tree: TreeId | null): Promise<Answer<TreeOutline>>;
  /**
   * The top of a large current tree, read ahead while the window started, as the flame graph
   * draws it until the whole outline comes (`expandPreview`); null when there is none.
   */
  outlinePreview(): Promise<Answer<PreviewOutline | null>>;
  /** Calls `listener` with the newest event seq whenever the data directory changes. */
  onTreeChanged(listener: (seq: number) => void): Promise<() => void>;
  /**
   * Calls `listener` with what the database's quick check found if it finds the file damaged
   * after the window opened (the check runs beside the opening; nothing is written meanwhile).
   */
  onDatabaseDamaged(listener: (error: ApiError) => void): Promise<() => void>;
  /** Calls `listener` with what the backend read whenever it has read a followed session. */
  onFollowRead(listener: (read: FollowRead) => void): Promise<() => void>;
  /** Calls `listener` whenever the gateway has ended a call (answered, refused or failed). */
  onGatewayCalled(listener: (called: GatewayCalled) => void): Promise<() => void>;
  /**
   * Imports the session or export at `path` as a new tree (the `importSession` command), calling
   * `onProgress` as the backend reads it.
   */
  importFile(
    path: string,
    onProgress: (progress: ImportProgress) => void,
  ): Promise<{ status: "ok"; data: ImportSummary } | { status: "error"; error: ApiError }>;
  /**
   * Writes the frames `scope` names from frame `id` to `path` (the `exportFrames` command),
   * calling `onProgress` as the backend reads them.
   */
  exportFrames(
    id: string,
    scope: ExportScope,
    format: ExportFormat,
    path: string,
    onProgress: (progress: ExportProgress) => void,
  ): Promise<Answer<ExportSummary>>;
  /**
   * `commands.sendMessage` with a listener in place of the Tauri channel, so components (and
   * their tests) never construct IPC objects; main.tsx makes the channel.
   */
  sendMessage(
    frame: string | null,
    text: string,
    model: string | null,
    listener: ChatListener,
  ): CommandAnswer<"sendMessage">;
  /** `commands.answerAgain`, with a listener in place of the channel. */
  answerAgain(
    frame: string,
    model: string | null,
    listener: ChatListener,
  ): CommandAnswer<"answerAgain">;
  /** `commands.answerRequest`, with a listener in place of the channel. */
  answerRequest(
    frame: string,
    answer: RequestAnswer,
    model: string | null,
    listener: ChatListener,
  ): CommandAnswer<"answerRequest">;
};
