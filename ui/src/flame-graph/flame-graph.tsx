// The flame graph's view: the canvas and the panes around it, the hover's tooltip and the frame
// menu. What it draws comes from `layout.ts` (laid out by `laid.ts`) through `render.ts`, painted
// by `graph-view.ts`; the input is `input.ts`'s, the zoom `zoom.ts`'s, the breadcrumb
// `breadcrumb.tsx`'s; the accessible mirror of the tree (`tree-mirror.tsx`), the tooltip
// (`tooltip.tsx`) and the frame menu (`frame-menu.tsx`) stand beside it. What the person asks
// for goes out through the callbacks, and the backend decides.

import { useMemo, useRef, useState } from "preact/hooks";

import type {
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import type { Backend } from "../backend";
import { budgetExceeded, budgetOf } from "../budget-text";
import { Breadcrumb } from "./breadcrumb";
import { budgetUseByRank } from "./budget-use";
import { FrameMenu, type FrameRequest } from "./frame-menu";
import { useGraphHook } from "./graph-hook";
import { useGraphView } from "./graph-view";
import { keyHandler, usePointerInput, wheelHandler, type RankAt } from "./input";
import { frameAt as frameOf, useLaid, type Laid } from "./laid";
import type { WeightMode } from "./layout";
import { ROW_HEIGHT, type DropMarker, type Scene } from "./render";
import { Tooltip, useFrameCost } from "./tooltip";
import { TreeMirror, itemId } from "./tree-mirror";
import { useZoom } from "./zoom";

export type { FrameRequest } from "./frame-menu";

export interface FlameGraphProps {
  /** Where the tooltip reads the cost of a frame other than the focused one. */
  backend: Pick<Backend, "frameCost">;
  outline: TreeOutline;
  /**
   * Whether `outline` is a preview of the tree's top levels (`expandPreview`), drawn until the
   * whole outline comes: the benchmark times the first paint of the whole tree apart.
   */
  preview?: boolean;
  mode: WeightMode;
  /** What the frames' fill says: their status, or also how much of their budget is spent. */
  colour?: GraphColour;
  onFocus: (frame: FrameOutline) => void;
  onRequest: (request: FrameRequest) => void;
  onMove: (frame: FrameOutline, parent: FrameOutline, position: number | null) => void;
}

/** What the graph's fills say: each frame's status, or also the budget used on its path. */
export type GraphColour = "status" | "budget";

/**
 * Drawn before the title of a frame whose own budget is spent. A sign the text fonts have (DejaVu
 * Sans draws it): an emoji such as ⛔ is an empty box where no emoji font is installed.
 */
export const BUDGET_SPENT_SIGN = "⊘ ";

/** What the scene reads by rank: titles (with the spent-budget sign) and, by budget, the fills. */
function useSceneText(laid: Laid, outline: TreeOutline, colour: GraphColour) {
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
  const titleOf = (rank: number) => {
    const frame = frameOf(laid, rank);
    if (frame === undefined) return "";
    return (spentBudgets.has(frame.id) ? BUDGET_SPENT_SIGN : "") + frame.title;
  };
  return { titleOf, budgetUse };
}

export function FlameGraph({
  backend,
  outline,
  preview = false,
  mode,
  colour = "status",
  onFocus,
  onRequest,
  onMove,
}: FlameGraphProps) {
  const laid = useLaid(outline, mode);
  const frameAt = (rank: number) => frameOf(laid, rank);
  const scene = useRef<Scene | null>(null);
  const graph = useGraphView(scene);
  useGraphHook(laid, graph.canvas, graph.view);
  const zoom = useZoom(laid, frameAt, graph.setView);
  const [hover, setHover] = useState<RankAt | null>(null);
  const [active, setActive] = useState(-1);
  const [menu, setMenu] = useState<RankAt | null>(null);
  const [drop, setDrop] = useState<DropMarker | null>(null);

  // The focus's rank, found without the map of every id (see `Laid.rankOf`).
  const focusId = outline.tree.focus;
  const focus = useMemo(() => {
    const i = laid.frames.findIndex((f) => f.id === focusId);
    return i < 0 ? -1 : laid.rankOfIndex[i]!;
  }, [laid, focusId]);
  const activeRank = active >= 0 && active < laid.layout.count ? active : Math.max(focus, 0);

  const { titleOf, budgetUse } = useSceneText(laid, outline, colour);
  scene.current = {
    layout: laid.layout,
    status: laid.status,
    titleOf,
    budgetUse,
    rolledBack: laid.rolledBack,
    focus,
    active: activeRank,
    hover: hover?.rank ?? -1,
    drop,
    preview,
  };

  const input = {
    laid,
    frameAt,
    graph,
    zoom,
    setHover,
    setActive,
    setMenu,
    setDrop,
    onFocus,
    onRequest,
    onMove,
  };
  const pointer = usePointerInput(input);

  const hovered = hover !== null ? frameAt(hover.rank) : undefined;
  const hoveredCost = useFrameCost(backend, outline, hovered?.id ?? null);
  const menuFrame = menu !== null ? frameAt(menu.rank) : undefined;
  const rows = laid.layout.rows.length;

  return (
    <div class="flame-graph">
      <Breadcrumb treeTitle={outline.tree.title} laid={laid} zoom={zoom} handle={pointer.handle} />
      <div
        ref={graph.scroller}
        class="graph-scroller"
        role="tree"
        aria-label={`Frames of ${outline.tree.title}`}
        aria-activedescendant={activeRank >= 0 ? itemId(frameAt(activeRank)?.id ?? "") : undefined}
        tabIndex={0}
        data-testid="flame-graph"
        onScroll={graph.onScroll}
        onKeyDown={keyHandler(input, activeRank, menu)}
        onWheel={wheelHandler(graph)}
      >
        <canvas
          ref={graph.canvas}
          class="graph-canvas"
          aria-hidden="true"
          data-testid="flame-canvas"
          {...pointer.canvas}
        />
        <div
          class="graph-spacer"
          style={{ height: `${Math.max(0, rows * ROW_HEIGHT + 8 - graph.paneHeight)}px` }}
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
          paneWidth={graph.view.current.width}
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
            graph.scroller.current?.focus();
          }}
          onClose={() => setMenu(null)}
        />
      )}
    </div>
  );
}
