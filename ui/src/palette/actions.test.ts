import { describe, expect, it } from "vitest";

import type {
  FrameActions_Serialize as FrameActions,
  Status,
  TreeListEntry,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { IN_PROGRESS_ACTIONS, outlineFrame } from "../test-backend";
import { paletteActions, type Allowed, type PaletteAction, type PaletteContext } from "./actions";

const ROOT = "f0000000001";
const FRAME = "f0000000002";
const CHILD = "f0000000003";

function outline(status: Status, workspace: string | null = null): TreeOutline {
  return {
    tree: { id: "t0000000001", title: "Build", root: ROOT, focus: FRAME, created_at: 0, workspace },
    frames: [
      outlineFrame(ROOT, null, { title: "Build the app" }),
      outlineFrame(FRAME, ROOT, { title: "Design", status }),
      outlineFrame(CHILD, FRAME, { title: "Sketch", status: "planned" }),
    ],
    seq: 1,
  };
}

const COMPLETED: FrameActions = {
  ...IN_PROGRESS_ACTIONS,
  push: false,
  plan: false,
  pop: false,
  retry: false,
  invalidate: false,
  chat: false,
};

function tree(id: string, title: string, frames: number): TreeListEntry {
  return {
    tree: { id, title, root: ROOT, focus: FRAME, created_at: 0, workspace: null },
    root_status: "in_progress",
    frame_count: frames,
    current: false,
  };
}

/** A context over `tree`, every handler writing what it was called with to `calls`. */
function context(
  tree: TreeOutline | null,
  allowed: Allowed,
  more: Partial<PaletteContext> = {},
): { context: PaletteContext; calls: string[] } {
  const calls: string[] = [];
  const log =
    (name: string) =>
    (...args: unknown[]) =>
      calls.push([name, ...args.map((a) => JSON.stringify(a))].join(" "));
  return {
    calls,
    context: {
      outline: tree,
      allowed,
      trees: [],
      mode: "tokens",
      modes: [
        { mode: "tokens", label: "Tokens" },
        { mode: "equal", label: "Equal" },
      ],
      request: (request) => calls.push(`request ${request.kind} ${request.frame.id}`),
      focus: log("focus"),
      openTree: (entry) => calls.push(`openTree ${entry.tree.id}`),
      newTree: log("newTree"),
      deleteTree: log("deleteTree"),
      chooseWorkspace: log("chooseWorkspace"),
      removeWorkspace: log("removeWorkspace"),
      importFile: log("importFile"),
      openSessions: log("openSessions"),
      openSettings: log("openSettings"),
      setMode: log("setMode"),
      colour: "status",
      setColour: log("setColour"),
      togglePanel: log("togglePanel"),
      search: null,
      ...more,
    },
  };
}

function byId(actions: PaletteAction[], id: string): PaletteAction {
  const found = actions.find((a) => a.id === id);
  if (found === undefined) throw new Error(`no ${id} among ${actions.map((a) => a.id).join(", ")}`);
  return found;
}

describe("the palette's actions", () => {
  it("offers the focused frame's actions as the backend allows them, the rest greyed", () => {
    const { context: c, calls } = context(outline("in_progress"), {
      state: "ready",
      actions: IN_PROGRESS_ACTIONS,
    });
    const actions = paletteActions(c);
    const pop = byId(actions, "frame.pop");
    expect(pop).toMatchObject({ label: "Pop…", detail: "Design", disabled: null });
    expect(pop.shortcut).toEqual(["Graph: O", "/pop"]);
    pop.run();
    byId(actions, "frame.push").run();
    byId(actions, "frame.export").run();
    expect(calls).toEqual([
      `request pop ${FRAME}`,
      `request push ${FRAME}`,
      `request export ${FRAME}`,
    ]);
    expect(byId(actions, "frame.resume").disabled).toBe(
      "Not allowed now for “Design”, which is in progress",
    );
    expect(byId(actions, "frame.delete").disabled).not.toBeNull();
  });

  it("starts what /start would when the focused frame is not planned itself", () => {
    const { context: c, calls } = context(outline("in_progress"), {
      state: "ready",
      actions: { ...IN_PROGRESS_ACTIONS, start_target: CHILD },
    });
    const start = byId(paletteActions(c), "frame.start");
    expect(start).toMatchObject({ detail: "Sketch", disabled: null });
    start.run();
    expect(calls).toEqual([`request start ${CHILD}`]);
  });

  it("greys the frame's actions while they are read, and says when they could not be", () => {
    const reading = paletteActions(context(outline("completed"), { state: "reading" }).context);
    expect(byId(reading, "frame.retry").disabled).toBe("Reading what the frame allows…");
    const failed = paletteActions(
      context(outline("completed"), { state: "failed", message: "the frame is gone" }).context,
    );
    expect(byId(failed, "frame.pop").disabled).toContain("the frame is gone");
    // What needs no answer from the backend is offered all the same.
    expect(byId(failed, "frame.export").disabled).toBeNull();
    expect(byId(failed, "panel.inspector").disabled).toBeNull();
  });

  it("lists every frame of the tree to focus, the focused one greyed", () => {
    const { context: c, calls } = context(outline("completed"), {
      state: "ready",
      actions: COMPLETED,
    });
    const focusing = paletteActions(c).filter((a) => a.id.startsWith("focus."));
    expect(focusing.map((a) => a.label)).toEqual([
      "Focus: Build the app",
      "Focus: Design",
      "Focus: Sketch",
    ]);
    expect(focusing[1]?.disabled).toBe("Already in focus");
    focusing[2]?.run();
    expect(calls).toEqual([`focus "${CHILD}"`]);
  });

  it("offers the width modes, the other trees, the panels, and the tree's own actions", () => {
    const { context: c, calls } = context(
      outline("completed", "/work/app"),
      { state: "ready", actions: COMPLETED },
      { trees: [tree("t0000000001", "Build", 7), tree("t0000000002", "Ship", 3)] },
    );
    const actions = paletteActions(c);
    expect(byId(actions, "width.tokens").disabled).toBe("The graph's width now");
    byId(actions, "width.equal").run();
    expect(byId(actions, "colour.status").disabled).toBe("The graph's colouring now");
    byId(actions, "colour.budget").run();
    expect(actions.some((a) => a.id === "tree.open.t0000000001")).toBe(false);
    const ship = byId(actions, "tree.open.t0000000002");
    expect(ship).toMatchObject({ label: "Switch to tree: Ship", detail: "3 frames" });
    ship.run();
    byId(actions, "tree.delete").run();
    byId(actions, "panel.changes").run();
    byId(actions, "panel.budget").run();
    byId(actions, "workspace.remove").run();
    expect(byId(actions, "workspace.choose").label).toBe("Change the workspace folder…");
    expect(calls).toEqual([
      'setMode "equal"',
      'setColour "budget"',
      "openTree t0000000002",
      "deleteTree 7",
      'togglePanel "changes"',
      'togglePanel "budget"',
      "removeWorkspace",
    ]);
  });

  it("offers only what needs no tree when there is none", () => {
    const { context: c, calls } = context(null, { state: "reading" });
    const actions = paletteActions(c);
    expect(actions.map((a) => a.id)).toEqual([
      "app.settings",
      "app.import",
      "app.sessions",
      "tree.new",
    ]);
    for (const action of actions) action.run();
    expect(calls).toEqual(["openSettings", "importFile", "openSessions", "newTree"]);
  });

  it("offers search once the window has it", () => {
    const without = paletteActions(context(null, { state: "reading" }).context);
    expect(without.some((a) => a.id === "app.search")).toBe(false);
    let searched = 0;
    const withSearch = paletteActions(
      context(null, { state: "reading" }, { search: () => (searched += 1) }).context,
    );
    const search = byId(withSearch, "app.search");
    expect(search.shortcut).toEqual(["Ctrl+F", "Ctrl+K"]);
    search.run();
    expect(searched).toBe(1);
  });

  it("gives every entry its own id", () => {
    const { context: c } = context(
      outline("in_progress"),
      { state: "ready", actions: IN_PROGRESS_ACTIONS },
      { trees: [tree("t0000000002", "Ship", 3)], search: () => undefined },
    );
    const ids = paletteActions(c).map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
