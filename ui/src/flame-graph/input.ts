// The flame graph's input: the pointer (hover, click to focus, drag to pan, drag a planned frame
// to move it, drag the "new plan" handle onto the tree, double-click to zoom, the context menu),
// the wheel (zoom, and pan sideways or down) and the keyboard (move between frames, zoom, and each
// frame action's key). What the person asks for goes out through the graph's callbacks.

import { useRef } from "preact/hooks";

import type { FrameOutline_Serialize as FrameOutline } from "../bindings";
import { dropPlace, type DropPlace } from "./drop";
import type { FrameRequest } from "./frame-menu";
import type { GraphView } from "./graph-view";
import type { Laid } from "./laid";
import { ROW_HEIGHT, hitTest, rectOnCanvas, type DropMarker } from "./render";
import type { Zoom } from "./zoom";

/** Pointer travel, in CSS pixels, before a press becomes a drag. */
const DRAG_START_PX = 4;

/** A frame's rank and a point on the canvas: where the pointer hovers, where the menu opens. */
export interface RankAt {
  rank: number;
  x: number;
  y: number;
}

/** What the input handlers read and change. */
export interface GraphInput {
  laid: Laid;
  frameAt: (rank: number) => FrameOutline | undefined;
  graph: GraphView;
  zoom: Zoom;
  setHover: (hover: RankAt | null) => void;
  setActive: (rank: number) => void;
  setMenu: (menu: RankAt | null) => void;
  setDrop: (drop: DropMarker | null) => void;
  onFocus: (frame: FrameOutline) => void;
  onRequest: (request: FrameRequest) => void;
  onMove: (frame: FrameOutline, parent: FrameOutline, position: number | null) => void;
}

type Press =
  | { kind: "none" }
  | { kind: "pending"; x: number; y: number; rank: number; planned: boolean }
  | { kind: "pan"; x: number; y: number }
  | { kind: "move"; rank: number; place: DropPlace | null }
  | { kind: "new-plan"; place: DropPlace | null };

/** The handlers of the canvas's pointer events and of the "new plan" handle's. */
export function usePointerInput(input: GraphInput) {
  const { laid, frameAt, graph, setHover, setActive, setMenu, setDrop } = input;
  const { view, local } = graph;
  const press = useRef<Press>({ kind: "none" });

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
      graph.setView(v.x0 - dx, v.x1 - dx);
      if (graph.scroller.current) graph.scroller.current.scrollTop -= y - q.y;
    } else if (q.kind === "move") {
      q.place = dropPlace(laid.layout, view.current, x, y, q.rank);
      setDrop(q.place?.marker ?? null);
    } else if (q.kind === "none") {
      const rank = hitTest(laid.layout, view.current, x, y);
      setHover(rank >= 0 ? { rank, x, y } : null);
    }
  };

  const onPointerUp = () => {
    const p = press.current;
    press.current = { kind: "none" };
    setDrop(null);
    if (p.kind === "pending" && p.rank >= 0) {
      setActive(p.rank);
      input.onFocus(frameAt(p.rank)!);
    } else if (p.kind === "move" && p.place !== null) {
      input.onMove(frameAt(p.rank)!, frameAt(p.place.parent)!, p.place.position);
    }
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
      const frame = frameAt(p.place.parent)!;
      input.onRequest({ kind: "plan-at", frame, position: p.place.position });
    }
  };

  const rankUnder = (event: MouseEvent) => {
    const { x, y } = local(event);
    return { rank: hitTest(laid.layout, view.current, x, y), x, y };
  };
  const onDoubleClick = (event: MouseEvent) => {
    const { rank } = rankUnder(event);
    if (rank >= 0) input.zoom.zoomTo(rank);
  };
  const onContextMenu = (event: MouseEvent) => {
    event.preventDefault();
    const at = rankUnder(event);
    if (at.rank >= 0) {
      setActive(at.rank);
      setMenu(at);
      setHover(null);
    }
  };

  return {
    canvas: {
      onPointerDown,
      onPointerMove,
      onPointerUp,
      onPointerLeave: () => press.current.kind === "none" && setHover(null),
      onDblClick: onDoubleClick,
      onContextMenu,
    },
    handle: { onPointerDown: onHandleDown, onPointerMove: onHandleMove, onPointerUp: onHandleUp },
  };
}

/** The wheel zooms about the pointer; sideways, it pans; with Shift, it scrolls the rows. */
export function wheelHandler(graph: GraphView) {
  return (event: WheelEvent) => {
    event.preventDefault();
    const { view, scroller, setView } = graph;
    const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? view.current.height : 1;
    const v = view.current;
    if (event.shiftKey) {
      if (scroller.current) scroller.current.scrollTop += (event.deltaY || event.deltaX) * unit;
      return;
    }
    const { x } = graph.local(event);
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
}

/**
 * The keyboard on the graph, with the frame at `active` the one it acts on: the arrows and Home
 * move between frames, Enter focuses, Z zooms and Escape zooms out (or closes `menu`), + and -
 * zoom the view, each frame action's key asks for it, and the menu key opens the frame menu.
 */
export function keyHandler(input: GraphInput, active: number, menu: RankAt | null) {
  const { laid, frameAt, graph, zoom, onRequest } = input;
  const { view, scroller, setView } = graph;

  const move = (rank: number) => {
    if (rank < 0) return;
    input.setActive(rank);
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

  return (event: KeyboardEvent) => {
    const L = laid.layout;
    const a = active;
    const frame = frameAt(a);
    if (menu !== null && event.key === "Escape") {
      input.setMenu(null);
      return;
    }
    const keys: Record<string, () => void> = {
      ArrowUp: () => move(L.parent[a] ?? -1),
      ArrowDown: () => move(L.firstChild[a] ?? -1),
      ArrowLeft: () => move(L.prevSibling[a] ?? -1),
      ArrowRight: () => move(L.nextSibling[a] ?? -1),
      Home: () => move(0),
      Enter: () => frame && input.onFocus(frame),
      Escape: () => zoom.zoomOutTo(zoom.path.length - 1),
      z: () => zoom.zoomTo(a),
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
        if (rect) input.setMenu({ rank: a, x: Math.max(rect.x, 0) + 8, y: rect.y + ROW_HEIGHT });
      },
    };
    const action = event.ctrlKey || event.altKey || event.metaKey ? undefined : keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  };
}
