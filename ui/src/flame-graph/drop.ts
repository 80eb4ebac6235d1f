// Where a drag would land: pure functions from a pointer position over the layout to a parent
// and a position, in the terms `move_frame` and `plan_frames` take. Whether the backend accepts
// the drop is not decided here: it answers, and a refusal is shown with its message.

import type { FlameLayout } from "./layout";
import { ROW_HEIGHT, hitTest, rectOnCanvas, type DropMarker, type Viewport } from "./render";

/** A drop: the new parent (by rank) and the position among its children, or null for last. */
export interface DropPlace {
  marker: DropMarker;
  parent: number;
  position: number | null;
}

/** Children of `parent` in order, leaving out `except` (the frame being moved, or -1). */
export function childrenOf(layout: FlameLayout, parent: number, except: number): number[] {
  const out: number[] = [];
  for (let c = layout.firstChild[parent] ?? -1; c >= 0; c = layout.nextSibling[c]!) {
    if (c !== except) out.push(c);
  }
  return out;
}

/**
 * Where a frame (`moving`, or -1 for a new plan) dropped at canvas point (`cssX`, `cssY`) goes.
 * The outer quarters of a rectangle mean "before" and "after" it among its siblings; its middle
 * means "into" it, as its last child. Empty space below a frame means "into" it, at the place
 * among its children where the pointer is.
 */
export function dropPlace(
  layout: FlameLayout,
  view: Viewport,
  cssX: number,
  cssY: number,
  moving: number,
): DropPlace | null {
  const hit = hitTest(layout, view, cssX, cssY);
  if (hit >= 0) {
    if (hit === moving) return null;
    const rect = rectOnCanvas(layout, view, hit)!;
    const share = (cssX - rect.x) / rect.width;
    const parent = layout.parent[hit]!;
    if (parent >= 0 && rect.width >= 16 && (share < 0.25 || share > 0.75)) {
      const place = share < 0.25 ? "before" : "after";
      const siblings = childrenOf(layout, parent, moving);
      const index = siblings.indexOf(hit);
      return {
        marker: { rank: hit, place },
        parent,
        position: place === "before" ? index : index + 1,
      };
    }
    return { marker: { rank: hit, place: "into" }, parent: hit, position: null };
  }
  const above = hitTest(layout, view, cssX, cssY - ROW_HEIGHT);
  if (above < 0 || above === moving) return null;
  const x = view.x0 + (cssX * (view.x1 - view.x0)) / view.width;
  const siblings = childrenOf(layout, above, moving);
  const position = siblings.filter((c) => (layout.x0[c]! + layout.x1[c]!) / 2 < x).length;
  return { marker: { rank: above, place: "into" }, parent: above, position };
}
