// The flame graph's view: the canvas, pan and zoom, hit-testing, pointer and keyboard input, and
// the breadcrumb. What it draws comes from `layout.ts` through `render.ts`; the accessible mirror
// of the tree (`tree-mirror.tsx`), the tooltip (`tooltip.tsx`) and the frame menu
// (`frame-menu.tsx`) stand beside it. What the person asks for goes out through the callbacks,
// and the backend decides.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

import type {
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import type { Backend } from "../backend";
import { budgetExceeded, budgetOf } from "../budget-text";
import { markOnce } from "../marks";
import { budgetUseByRank } from "./budget-use";
import { dropPlace, type DropPlace } from "./drop";
import { FrameMenu, type FrameMenuAction } from "./frame-menu";
import { layoutInputOf, layoutSteps, type FlameLayout, type WeightMode } from "./layout";
import {
  ROW_HEIGHT,
  graphContext,
  hitTest,
  paint,
  rectOnCanvas,
  statusCode,
  type DropMarker,
  type Scene,
  type Viewport,
} from "./render";
import { runInSlices } from "./slices";
import { Tooltip, useFrameCost } from "./tooltip";
import { TreeMirror, itemId } from "./tree-mirror";

/** What the person asked for on a frame; the app turns each into a dialog or a command. */
export type FrameRequest =
  | { kind: FrameMenuAction; frame: FrameOutline }
  | { kind: "plan-at"; frame: FrameOutline; position: number | null };

export interface FlameGraphProps {
  /** Where the tooltip reads the cost of a frame other than the focused one. */
  backend: Pick<Backend, "frameCost">;
  outline: TreeOutline;
  mode: WeightMode;
  /** What the frames' fill says: their status, or also how much of their budget is spent. */
  colour?: GraphColour;
  onFocus: (frame: FrameOutline) => void;
  onRequest: (request: FrameRequest) => void;
  onMove: (frame: FrameOutline, parent: FrameOutline, position: number | null) => void;
}

/** What the graph's fills say: each frame's status, or also the budget used on its path. */
export type GraphColour = "status" | "budget";

/** Pointer travel, in CSS pixels, before a press becomes a drag. */
const DRAG_START_PX = 4;
const MIN_SPAN = 1e-9;
/**
 * Drawn before the title of a frame whose own budget is spent. A sign the text fonts have (DejaVu
 * Sans draws it): an emoji such as ⛔ is an empty box where no emoji font is installed.
 */
export const BUDGET_SPENT_SIGN = "⊘ ";

/**
 * Trees up to this many frames are laid out while the view renders (100k frames take some tens
 * of milliseconds), so the tree is drawn in the first frame after it arrives; larger ones in
 * slices that give the window a turn every few milliseconds (`slices.ts`), the previous layout of
 * the same tree staying on screen meanwhile.
 */
export const SYNC_LAYOUT_FRAMES = 200_000;

/**
 * An outline laid out: the frames it was made from, with what drawing reads on every paint by
 * rank. Titles and the rest are read from the frames when needed, not copied per frame.
 */
export interface Laid {
  tree: string;
  frames: readonly FrameOutline[];
  layout: FlameLayout;
  status: Uint8Array;
  rolledBack: Uint8Array;
  /** Each frame's rank by its index in `frames`; -1 for a frame the root does not reach. */
  rankOfIndex: Int32Array;
  /** The rank of the frame with id `id`, if it is laid out. */
  rankOf: (id: string) => number | undefined;
}

function* layInSteps(outline: TreeOutline, mode: WeightMode): Generator<void, Laid, void> {
  const { frames } = outline;
  const input = layoutInputOf(frames, mode, Date.now(), outline.own_costs);
  yield;
  const layout = yield* layoutSteps(input);
  const status = new Uint8Array(layout.count);
  const rolledBack = new Uint8Array(layout.count);
  const rankOfIndex = new Int32Array(frames.length).fill(-1);
  for (let r = 0; r < layout.count; r++) {
    const i = layout.source[r]!;
    const frame = frames[i]!;
    status[r] = statusCode(frame.status);
    rolledBack[r] = frame.rolled_back_at !== null ? 1 : 0;
    rankOfIndex[i] = r;
  }
  if (layout.count > 0) markOnce("flame:laid-out");
  // Looking frames up by id is for the hooks, the breadcrumb and the tests: the map of a large
  // tree's ids is made the first time it is asked for, not before the tree is first drawn.
  let byId: Map<string, number> | null = null;
  const rankOf = (id: string) => {
    if (byId === null) {
      byId = new Map();
      for (let i = 0; i < rankOfIndex.length; i++) {
        if (rankOfIndex[i]! >= 0) byId.set(frames[i]!.id, rankOfIndex[i]!);
      }
    }
    return byId.get(id);
  };
  return {
    tree: outline.tree.id,
    frames,
    layout,
    status,
    rolledBack,
    rankOfIndex,
    rankOf,
  };
}

/** `outline` laid out for `mode`, at once. */
export function lay(outline: TreeOutline, mode: WeightMode): Laid {
  const steps = layInSteps(outline, mode);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/** What is drawn while a large tree's first layout is made: nothing. */
function nothingLaid(outline: TreeOutline): Laid {
  return lay({ ...outline, frames: [] }, "equal");
}

/**
 * `outline` laid out for `mode`: at once for a tree of up to `syncFrames` frames; for a larger
 * one, in slices, with the tree's previous layout (or nothing) until they are done.
 */
export function useLaid(
  outline: TreeOutline,
  mode: WeightMode,
  syncFrames: number = SYNC_LAYOUT_FRAMES,
): Laid {
  const sliced = outline.frames.length > syncFrames;
  const immediate = useMemo(() => (sliced ? null : lay(outline, mode)), [outline, mode, sliced]);
  const [background, setBackground] = useState<Laid | null>(null);
  useEffect(() => {
    if (!sliced) return;
    const run = runInSlices(layInSteps(outline, mode));
    void run.done.then(setBackground);
    return () => run.cancel();
  }, [outline, mode, sliced]);
  const empty = useMemo(() => nothingLaid(outline), [outline]);
  if (immediate !== null) return immediate;
  return background !== null && background.tree === outline.tree.id ? background : empty;
}

/**
 * What the benchmark (tests/bench) reads of the paints: when the first paint that drew frames
 * ended, and, while `timing` is on, how long each paint took with its rasterising.
 */
const paintRecord: { firstFramesAt: number | null; timing: boolean; times: number[] } = {
  firstFramesAt: null,
  timing: false,
  times: [],
};

type Press =
  | { kind: "none" }
  | { kind: "pending"; x: number; y: number; rank: number; planned: boolean }
  | { kind: "pan"; x: number; y: number }
  | { kind: "move"; rank: number; place: DropPlace | null }
  | { kind: "new-plan"; place: DropPlace | null };

/** Hooks for end-to-end tests and the benchmark: where a frame is drawn, in viewport CSS pixels. */
export interface FlameGraphHook {
  rectOf(id: string): { x: number; y: number; width: number; height: number } | null;
  /** Whether the frame is drawn with the rolled-back mark; null when it is not in the tree. */
  rolledBackOf(id: string): boolean | null;
  view(): Viewport;
  /** How many frames are laid out and drawn (0 while a large tree's layout is being made). */
  laidOut(): number;
  /**
   * When the first paint that drew frames ended, in milliseconds since the epoch
   * (`performance.timeOrigin + performance.now()`), or null before it.
   */
  firstFramesPaintedAt(): number | null;
  /**
   * Starts timing every paint (each waits for its pixels, so the time covers rasterising), or
   * stops and returns the times, in milliseconds, since it was started.
   */
  timePaints(on: boolean): number[];
}

declare global {
  interface Window {
    __flameGraph?: FlameGraphHook;
  }
}

export function FlameGraph({
  backend,
  outline,
  mode,
  colour = "status",
  onFocus,
  onRequest,
  onMove,
}: FlameGraphProps) {
  const laid = useLaid(outline, mode);
  const frameAt = (rank: number): FrameOutline | undefined =>
    rank < 0 ? undefined : laid.frames[laid.layout.source[rank]!];

  const scroller = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  // The view lives in a ref: panning and zooming repaint the canvas without re-rendering Preact.
  const view = useRef<Viewport>({ x0: 0, x1: 1, scrollTop: 0, width: 0, height: 0 });
  const press = useRef<Press>({ kind: "none" });
  const drawQueued = useRef(false);
  const [zoomPath, setZoomPath] = useState<string[]>([]);
  const [hover, setHover] = useState<{ rank: number; x: number; y: number } | null>(null);
  const [active, setActive] = useState(-1);
  const [menu, setMenu] = useState<{ rank: number; x: number; y: number } | null>(null);
  const [drop, setDrop] = useState<DropMarker | null>(null);
  const [paneHeight, setPaneHeight] = useState(0);

  // The focus's rank, found without the map of every id (see `Laid.rankOf`).
  const focusId = outline.tree.focus;
  const focus = useMemo(() => {
    const i = laid.frames.findIndex((f) => f.id === focusId);
    return i < 0 ? -1 : laid.rankOfIndex[i]!;
  }, [laid, focusId]);
  const activeRank = active >= 0 && active < laid.layout.count ? active : Math.max(focus, 0);

  // The few budgeted frames whose budget is spent are marked by a sign before their title.
  const spentBudgets = useMemo(
    () => new Set((outline.budgets ?? []).filter(budgetExceeded).map((b) => b.frame)),
    [outline.budgets],
  );
  const budgetUse = useMemo(
    () =>
      colour === "budget" ? budgetUseByRank(laid.layout, laid.frames, outline.budgets ?? []) : null,
    [colour, laid, outline.budgets],
  );
  const scene = useRef<Scene | null>(null);
  scene.current = {
    layout: laid.layout,
    status: laid.status,
    titleOf: (rank) => {
      const frame = laid.frames[laid.layout.source[rank]!];
      if (frame === undefined) return "";
      return (spentBudgets.has(frame.id) ? BUDGET_SPENT_SIGN : "") + frame.title;
    },
    rolledBack: laid.rolledBack,
    budgetUse,
    focus,
    active: activeRank,
    hover: hover?.rank ?? -1,
    drop,
  };

  const draw = () => {
    drawQueued.current = false;
    const c = canvas.current;
    const ctx = c ? graphContext(c) : null;
    if (!c || !ctx || !scene.current) return;
    const start = performance.now();
    paint(ctx, scene.current, view.current, window.devicePixelRatio || 1);
    if (paintRecord.timing) {
      // Reading a pixel back waits for the drawing to finish.
      ctx.getImageData(0, 0, 1, 1);
      paintRecord.times.push(performance.now() - start);
    }
    if (paintRecord.firstFramesAt === null && scene.current.layout.count > 0) {
      markOnce("flame:first-frames-painted");
      paintRecord.firstFramesAt = performance.timeOrigin + performance.now();
    }
  };
  const requestDraw = () => {
    if (drawQueued.current) return;
    drawQueued.current = true;
    requestAnimationFrame(draw);
  };

  // Keep the canvas the size of the visible pane, at the screen's pixel density. The rows scroll
  // under it: one canvas as tall as a deep tree would pass WebKitGTK's 32,767-pixel limit.
  useLayoutEffect(() => {
    const s = scroller.current;
    const c = canvas.current;
    if (!s || !c) return;
    const resize = () => {
      const dpr = window.devicePixelRatio || 1;
      const width = s.clientWidth;
      const height = s.clientHeight;
      view.current = { ...view.current, width, height, scrollTop: s.scrollTop };
      c.style.width = `${width}px`;
      c.style.height = `${height}px`;
      c.width = Math.round(width * dpr);
      c.height = Math.round(height * dpr);
      setPaneHeight(height);
      draw();
    };
    resize();
    const observer = new ResizeObserver(resize);
    observer.observe(s);
    return () => observer.disconnect();
  }, []);

  useEffect(requestDraw);

  useEffect(() => {
    window.__flameGraph = {
      rectOf(id) {
        const rank = laid.rankOf(id);
        const c = canvas.current;
        if (rank === undefined || !c) return null;
        const rect = rectOnCanvas(laid.layout, view.current, rank);
        if (rect === null) return null;
        const box = c.getBoundingClientRect();
        const left = Math.max(rect.x, 0);
        const right = Math.min(rect.x + rect.width, view.current.width);
        return {
          x: box.left + left,
          y: box.top + rect.y,
          width: right - left,
          height: rect.height,
        };
      },
      rolledBackOf(id) {
        const rank = laid.rankOf(id);
        return rank === undefined ? null : laid.rolledBack[rank] === 1;
      },
      view: () => ({ ...view.current }),
      laidOut: () => laid.layout.count,
      firstFramesPaintedAt: () => paintRecord.firstFramesAt,
      timePaints(on) {
        const times = paintRecord.times;
        paintRecord.timing = on;
        paintRecord.times = [];
        return times;
      },
    };
  }, [laid]);

  const setView = (x0: number, x1: number) => {
    const span = Math.max(MIN_SPAN, Math.min(1, x1 - x0));
    const left = Math.min(Math.max(0, x0), 1 - span);
    view.current = { ...view.current, x0: left, x1: left + span };
    requestDraw();
  };

  const zoomTo = (rank: number) => {
    const frame = frameAt(rank);
    if (!frame) return;
    setView(laid.layout.x0[rank]!, laid.layout.x1[rank]!);
    const path: string[] = [];
    for (let r = rank; r > 0; r = laid.layout.parent[r]!) path.unshift(frameAt(r)!.id);
    setZoomPath(path);
  };
  const zoomOutTo = (length: number) => {
    const path = zoomPath.slice(0, length);
    const last = path.length > 0 ? laid.rankOf(path[path.length - 1]!) : 0;
    setZoomPath(path);
    if (last === undefined) setView(0, 1);
    else setView(laid.layout.x0[last]!, laid.layout.x1[last]!);
  };

  const local = (event: { clientX: number; clientY: number }) => {
    const box = canvas.current!.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  };

  const onPointerDown = (event: PointerEvent) => {
    if (event.button !== 0) return;
    setMenu(null);
    const { x, y } = local(event);
    const rank = hitTest(laid.layout, view.current, x, y);
    press.current = { kind: "pending", x, y, rank, planned: frameAt(rank)?.status === "planned" };
    (event.currentTarget as Element).setPointerCapture(event.pointerId);
  };

  const onPointerMove = (event: PointerEvent) => {
    const { x, y } = local(event);
    const p = press.current;
    if (p.kind === "pending" && Math.hypot(x - p.x, y - p.y) >= DRAG_START_PX) {
      press.current =
        p.planned && p.rank > 0
          ? { kind: "move", rank: p.rank, place: null }
          : { kind: "pan", x: p.x, y: p.y };
      setHover(null);
    }
    const q = press.current;
    if (q.kind === "pan") {
      const v = view.current;
      const dx = ((x - q.x) * (v.x1 - v.x0)) / v.width;
      press.current = { kind: "pan", x, y };
      setView(v.x0 - dx, v.x1 - dx);
      if (scroller.current) scroller.current.scrollTop -= y - q.y;
    } else if (q.kind === "move") {
      q.place = dropPlace(laid.layout, view.current, x, y, q.rank);
      setDrop(q.place?.marker ?? null);
    } else if (q.kind === "none") {
      const rank = hitTest(laid.layout, view.current, x, y);
      setHover(rank >= 0 ? { rank, x, y } : null);
    }
  };

  const onPointerUp = (event: PointerEvent) => {
    const p = press.current;
    press.current = { kind: "none" };
    setDrop(null);
    if (p.kind === "pending" && p.rank >= 0) {
      setActive(p.rank);
      onFocus(frameAt(p.rank)!);
    } else if (p.kind === "move" && p.place !== null) {
      onMove(frameAt(p.rank)!, frameAt(p.place.parent)!, p.place.position);
    }
    void event;
  };

  // The "new plan" handle: a drag that starts on it ends with a planned child where it drops.
  const onHandleDown = (event: PointerEvent) => {
    if (event.button !== 0) return;
    press.current = { kind: "new-plan", place: null };
    (event.currentTarget as Element).setPointerCapture(event.pointerId);
  };
  const onHandleMove = (event: PointerEvent) => {
    const p = press.current;
    if (p.kind !== "new-plan") return;
    const { x, y } = local(event);
    const inside = x >= 0 && y >= 0 && x <= view.current.width && y <= view.current.height;
    p.place = inside ? dropPlace(laid.layout, view.current, x, y, -1) : null;
    setDrop(p.place?.marker ?? null);
  };
  const onHandleUp = () => {
    const p = press.current;
    press.current = { kind: "none" };
    setDrop(null);
    if (p.kind === "new-plan" && p.place !== null) {
      onRequest({ kind: "plan-at", frame: frameAt(p.place.parent)!, position: p.place.position });
    }
  };

  const onWheel = (event: WheelEvent) => {
    event.preventDefault();
    const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? view.current.height : 1;
    const v = view.current;
    if (event.shiftKey) {
      if (scroller.current) scroller.current.scrollTop += (event.deltaY || event.deltaX) * unit;
      return;
    }
    const { x } = local(event);
    const span = v.x1 - v.x0;
    if (event.deltaX !== 0 && Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
      const dx = (event.deltaX * unit * span) / v.width;
      setView(v.x0 + dx, v.x1 + dx);
      return;
    }
    const factor = Math.exp(event.deltaY * unit * 0.0015);
    const at = v.x0 + (x / v.width) * span;
    const next = Math.min(1, span * factor);
    setView(at - (x / v.width) * next, at - (x / v.width) * next + next);
  };

  const onDoubleClick = (event: MouseEvent) => {
    const { x, y } = local(event);
    const rank = hitTest(laid.layout, view.current, x, y);
    if (rank >= 0) zoomTo(rank);
  };

  const onContextMenu = (event: MouseEvent) => {
    event.preventDefault();
    const { x, y } = local(event);
    const rank = hitTest(laid.layout, view.current, x, y);
    if (rank >= 0) {
      setActive(rank);
      setMenu({ rank, x, y });
      setHover(null);
    }
  };

  const onScroll = () => {
    view.current = { ...view.current, scrollTop: scroller.current?.scrollTop ?? 0 };
    requestDraw();
  };

  const move = (rank: number) => {
    if (rank < 0) return;
    setActive(rank);
    const v = view.current;
    const rect = rectOnCanvas(laid.layout, v, rank);
    // Bring the frame into sight: its row vertically, and its rectangle if it is off the sides.
    if (rect !== null && scroller.current) {
      if (rect.y < 0) scroller.current.scrollTop += rect.y;
      else if (rect.y + ROW_HEIGHT > v.height)
        scroller.current.scrollTop += rect.y + ROW_HEIGHT - v.height;
    }
    const x0 = laid.layout.x0[rank]!;
    const x1 = laid.layout.x1[rank]!;
    if (x1 < v.x0 || x0 > v.x1)
      setView(x0 - (v.x1 - v.x0) / 2 + (x1 - x0) / 2, x0 + (v.x1 - v.x0) / 2 + (x1 - x0) / 2);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const L = laid.layout;
    const a = activeRank;
    const frame = frameAt(a);
    if (menu !== null && event.key === "Escape") {
      setMenu(null);
      return;
    }
    const keys: Record<string, () => void> = {
      ArrowUp: () => move(L.parent[a] ?? -1),
      ArrowDown: () => move(L.firstChild[a] ?? -1),
      ArrowLeft: () => move(L.prevSibling[a] ?? -1),
      ArrowRight: () => move(L.nextSibling[a] ?? -1),
      Home: () => move(0),
      Enter: () => frame && onFocus(frame),
      Escape: () => zoomOutTo(zoomPath.length - 1),
      z: () => zoomTo(a),
      "+": () =>
        setView(
          view.current.x0 + (view.current.x1 - view.current.x0) / 4,
          view.current.x1 - (view.current.x1 - view.current.x0) / 4,
        ),
      "-": () =>
        setView(
          view.current.x0 - (view.current.x1 - view.current.x0) / 2,
          view.current.x1 + (view.current.x1 - view.current.x0) / 2,
        ),
      p: () => frame && onRequest({ kind: "push", frame }),
      n: () => frame && onRequest({ kind: "plan", frame }),
      s: () => frame && onRequest({ kind: "start", frame }),
      o: () => frame && onRequest({ kind: "pop", frame }),
      i: () => frame && onRequest({ kind: "invalidate", frame }),
      e: () => frame && onRequest({ kind: "edit", frame }),
      Delete: () => frame && onRequest({ kind: "delete", frame }),
      ContextMenu: () => {
        const rect = rectOnCanvas(L, view.current, a);
        if (rect) setMenu({ rank: a, x: Math.max(rect.x, 0) + 8, y: rect.y + ROW_HEIGHT });
      },
    };
    const action = event.ctrlKey || event.altKey || event.metaKey ? undefined : keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  };

  const hovered = hover !== null ? frameAt(hover.rank) : undefined;
  const hoveredCost = useFrameCost(backend, outline, hovered?.id ?? null);
  const menuFrame = menu !== null ? frameAt(menu.rank) : undefined;
  const rows = laid.layout.rows.length;

  return (
    <div class="flame-graph">
      <nav class="graph-breadcrumb" aria-label="Zoomed subtree">
        <button
          type="button"
          class="crumb"
          onClick={() => zoomOutTo(0)}
          aria-current={zoomPath.length === 0}
        >
          {outline.tree.title}
        </button>
        {zoomPath.map((id, k) => {
          const r = laid.rankOf(id);
          return (
            <span key={id}>
              <span class="crumb-sep" aria-hidden="true">
                ›
              </span>
              <button
                type="button"
                class="crumb"
                onClick={() => zoomOutTo(k + 1)}
                aria-current={k === zoomPath.length - 1}
              >
                {r === undefined ? id : frameAt(r)?.title}
              </button>
            </span>
          );
        })}
        <span
          class="new-plan-handle"
          role="button"
          tabIndex={-1}
          title="Drag onto a frame (or below one) to plan a child there"
          data-testid="new-plan-handle"
          onPointerDown={onHandleDown}
          onPointerMove={onHandleMove}
          onPointerUp={onHandleUp}
        >
          + New plan
        </span>
      </nav>
      <div
        ref={scroller}
        class="graph-scroller"
        role="tree"
        aria-label={`Frames of ${outline.tree.title}`}
        aria-activedescendant={activeRank >= 0 ? itemId(frameAt(activeRank)?.id ?? "") : undefined}
        tabIndex={0}
        data-testid="flame-graph"
        onScroll={onScroll}
        onKeyDown={onKeyDown}
        onWheel={onWheel}
      >
        <canvas
          ref={canvas}
          class="graph-canvas"
          aria-hidden="true"
          data-testid="flame-canvas"
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
          onPointerLeave={() => press.current.kind === "none" && setHover(null)}
          onDblClick={onDoubleClick}
          onContextMenu={onContextMenu}
        />
        <div
          class="graph-spacer"
          style={{ height: `${Math.max(0, rows * ROW_HEIGHT + 8 - paneHeight)}px` }}
        />
        <TreeMirror
          layout={laid.layout}
          frames={laid.frames}
          active={activeRank}
          focus={focus}
          onPick={(r) => {
            setActive(r);
            onFocus(frameAt(r)!);
          }}
        />
      </div>
      {hovered && hover && (
        <Tooltip
          frame={hovered}
          cost={hoveredCost}
          budget={budgetOf(outline.budgets ?? [], hovered.id)}
          weight={laid.layout.weight[hover.rank]!}
          mode={mode}
          x={hover.x}
          y={hover.y}
          paneWidth={view.current.width}
        />
      )}
      {menuFrame && menu && (
        <FrameMenu
          frame={menuFrame}
          x={menu.x}
          y={menu.y}
          onPick={(kind) => {
            setMenu(null);
            onRequest({ kind, frame: menuFrame });
            scroller.current?.focus();
          }}
          onClose={() => setMenu(null)}
        />
      )}
    </div>
  );
}
