// The command palette's registry: every action the window's menus, buttons and keys offer, as
// entries with a label, the shortcuts that do the same elsewhere, and whether it can be done now.
// An entry runs the window's own handler for it — the one the button, the graph's menu or the
// key calls — so the palette never has a second way of doing anything. Frame actions follow what
// the backend allows with the focused frame (`FrameActions`); one it would refuse is listed
// greyed, with the reason.

import type {
  FrameActions_Serialize as FrameActions,
  FrameOutline_Serialize as FrameOutline,
  TreeListEntry,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import type { PanelRequest } from "../chat/chat-pane";
import type { FrameRequest } from "../flame-graph/flame-graph";
import type { FrameMenuAction } from "../flame-graph/frame-menu";
import type { GraphColour } from "../flame-graph/flame-graph";
import type { WeightMode } from "../flame-graph/layout";
import { STATUS_STYLE } from "../status-style";

/** One entry of the palette. */
export interface PaletteAction {
  /** Unique among the entries: "frame.pop", "focus.<frame id>", "width.tokens". */
  id: string;
  label: string;
  /** What it acts on or does, shown after the label; not matched. */
  detail: string | null;
  /** The keys or slash commands that do the same elsewhere, as they are written. */
  shortcut: string[];
  /** Why it cannot be done now; null when it can. */
  disabled: string | null;
  run: () => void;
}

/** What the backend allows with the focused frame, as far as the palette has read it. */
export type Allowed =
  | { state: "reading" }
  | { state: "ready"; actions: FrameActions }
  | { state: "failed"; message: string };

/** The chat pane's panels the palette can show or hide. */
export type PanePanel = PanelRequest["panel"];

/** The window as the palette sees it: its state, and the handlers its controls call. */
export interface PaletteContext {
  /** The current tree; null when there is none (or it could not be read). */
  outline: TreeOutline | null;
  allowed: Allowed;
  /** Every tree of the data directory; empty until read. */
  trees: readonly TreeListEntry[];
  mode: WeightMode;
  modes: readonly { mode: WeightMode; label: string }[];
  /** What the graph's frame menu and keys ask for on a frame. */
  request: (request: FrameRequest) => void;
  focus: (id: string) => void;
  openTree: (entry: TreeListEntry) => void;
  newTree: () => void;
  /** Asks to delete the current tree, which has `frames` frames. */
  deleteTree: (frames: number) => void;
  chooseWorkspace: () => void;
  removeWorkspace: () => void;
  importFile: () => void;
  /** Opens the Sessions view: other agents' sessions, to follow. */
  openSessions: () => void;
  openSettings: () => void;
  setMode: (mode: WeightMode) => void;
  /** What the graph's fills say, and the handler that changes it. */
  colour: GraphColour;
  setColour: (colour: GraphColour) => void;
  togglePanel: (panel: PanePanel) => void;
  /** Opens the search over every tree; null while the window has no search. */
  search: (() => void) | null;
}

/** The graph's colourings, as the palette names them. */
const GRAPH_COLOURS: readonly (readonly [GraphColour, string])[] = [
  ["status", "Status"],
  ["budget", "Budget used"],
];

/** The graph's keys act on the frame under its keyboard cursor; they are shown as such. */
const graphKey = (key: string) => `Graph: ${key}`;

/** The `FrameActions` flags the palette's frame entries follow. */
type AllowedFlag =
  "push" | "plan" | "start" | "pop" | "resume" | "retry" | "invalidate" | "edit" | "delete";

/** The entries that act on the focused frame, each enabled as the backend allows it. */
function frameEntries(context: PaletteContext, focused: FrameOutline): PaletteAction[] {
  const { allowed, request } = context;
  const status = STATUS_STYLE[focused.status].label.toLowerCase();
  const refusal = (flag: AllowedFlag): string | null => {
    if (allowed.state === "reading") return "Reading what the frame allows…";
    if (allowed.state === "failed")
      return `What the frame allows could not be read: ${allowed.message}`;
    return allowed.actions[flag]
      ? null
      : `Not allowed now for “${focused.title}”, which is ${status}`;
  };
  const entry = (
    flag: AllowedFlag,
    label: string,
    shortcut: string[],
    kind: FrameMenuAction = flag,
  ): PaletteAction => ({
    id: `frame.${flag}`,
    label,
    detail: focused.title,
    shortcut,
    disabled: refusal(flag),
    run: () => request({ kind, frame: focused }),
  });

  // Start starts the focused frame when it is planned, else what `/start` would start there.
  const target =
    allowed.state === "ready" && !allowed.actions.start && allowed.actions.start_target
      ? (context.outline?.frames.find((f) => f.id === allowed.actions.start_target) ?? null)
      : null;
  const start: PaletteAction =
    target === null
      ? entry("start", "Start", [graphKey("S"), "/start"])
      : {
          id: "frame.start",
          label: "Start",
          detail: target.title,
          shortcut: ["/start"],
          disabled: null,
          run: () => request({ kind: "start", frame: target }),
        };

  return [
    entry("push", "Push child…", [graphKey("P"), "/push"]),
    entry("plan", "Plan child…", [graphKey("N"), "/plan"]),
    start,
    entry("pop", "Pop…", [graphKey("O"), "/pop"]),
    entry("resume", "Resume", []),
    entry("retry", "Retry as a new frame", []),
    entry("invalidate", "Invalidate…", [graphKey("I"), "/invalidate"]),
    entry("edit", "Edit…", [graphKey("E")]),
    entry("delete", "Delete frame…", [graphKey("Del")]),
    {
      id: "frame.export",
      label: "Export…",
      detail: focused.title,
      shortcut: [],
      disabled: null,
      run: () => request({ kind: "export", frame: focused }),
    },
    {
      id: "panel.inspector",
      label: "Context inspector",
      detail: "show or hide what the model receives",
      shortcut: [],
      disabled: null,
      run: () => context.togglePanel("inspector"),
    },
    {
      id: "panel.changes",
      label: "Changes",
      detail: "show or hide the files the frame changed",
      shortcut: [],
      disabled: null,
      run: () => context.togglePanel("changes"),
    },
    {
      id: "panel.budget",
      label: "Budget…",
      detail: "set, change or clear what the frame's subtree may spend",
      shortcut: [],
      disabled: null,
      run: () => context.togglePanel("budget"),
    },
  ];
}

/** The entries that need a current tree. */
function treeEntries(context: PaletteContext, outline: TreeOutline): PaletteAction[] {
  const current = outline.tree;
  const frames =
    context.trees.find((t) => t.tree.id === current.id)?.frame_count ?? outline.frames.length;
  const entries: PaletteAction[] = [
    {
      id: "tree.delete",
      label: "Delete tree…",
      detail: current.title,
      shortcut: [],
      disabled: null,
      run: () => context.deleteTree(frames),
    },
    {
      id: "workspace.choose",
      label:
        current.workspace === null
          ? "Choose the workspace folder…"
          : "Change the workspace folder…",
      detail: current.title,
      shortcut: [],
      disabled: null,
      run: context.chooseWorkspace,
    },
    {
      id: "workspace.remove",
      label: "Remove the workspace folder",
      detail: current.title,
      shortcut: [],
      disabled: current.workspace === null ? "The tree has no workspace folder" : null,
      run: context.removeWorkspace,
    },
  ];
  for (const { mode, label } of context.modes) {
    entries.push({
      id: `width.${mode}`,
      label: `Width: ${label}`,
      detail: null,
      shortcut: [],
      disabled: mode === context.mode ? "The graph's width now" : null,
      run: () => context.setMode(mode),
    });
  }
  for (const [colour, label] of GRAPH_COLOURS) {
    entries.push({
      id: `colour.${colour}`,
      label: `Colour: ${label}`,
      detail: colour === "budget" ? "shade each frame by the most spent budget above it" : null,
      shortcut: [],
      disabled: colour === context.colour ? "The graph's colouring now" : null,
      run: () => context.setColour(colour),
    });
  }
  for (const entry of context.trees) {
    if (entry.tree.id === current.id) continue;
    entries.push({
      id: `tree.open.${entry.tree.id}`,
      label: `Switch to tree: ${entry.tree.title}`,
      detail: `${entry.frame_count} ${entry.frame_count === 1 ? "frame" : "frames"}`,
      shortcut: [],
      disabled: null,
      run: () => context.openTree(entry),
    });
  }
  // Every frame of the tree, in the outline's order (parents before children).
  for (const frame of outline.frames) {
    const focused = frame.id === current.focus;
    entries.push({
      id: `focus.${frame.id}`,
      label: `Focus: ${frame.title}`,
      detail: STATUS_STYLE[frame.status].label.toLowerCase(),
      shortcut: [],
      disabled: focused ? "Already in focus" : null,
      run: () => context.focus(frame.id),
    });
  }
  return entries;
}

/** Every entry of the palette for the window as `context` describes it, in the order listed. */
export function paletteActions(context: PaletteContext): PaletteAction[] {
  const { outline } = context;
  const focused = outline?.frames.find((f) => f.id === outline.tree.focus) ?? null;
  const entries: PaletteAction[] = focused === null ? [] : frameEntries(context, focused);
  if (context.search !== null) {
    entries.push({
      id: "app.search",
      label: "Search…",
      detail: "every message and result of every tree",
      shortcut: ["Ctrl+F", "Ctrl+K"],
      disabled: null,
      run: context.search,
    });
  }
  entries.push(
    {
      id: "app.settings",
      label: "Settings…",
      detail: "models, keys, workspace tools and checkpoints",
      shortcut: [],
      disabled: null,
      run: context.openSettings,
    },
    {
      id: "app.import",
      label: "Import…",
      detail: "a Claude Code, Codex or OpenCode session, or a Flame export",
      shortcut: [],
      disabled: null,
      run: context.importFile,
    },
    {
      id: "app.sessions",
      label: "Sessions…",
      detail: "follow Claude Code, Codex and OpenCode sessions as they are written",
      shortcut: [],
      disabled: null,
      run: context.openSessions,
    },
    {
      id: "tree.new",
      label: "New tree…",
      detail: null,
      shortcut: [],
      disabled: null,
      run: context.newTree,
    },
  );
  if (outline !== null) entries.push(...treeEntries(context, outline));
  return entries;
}
