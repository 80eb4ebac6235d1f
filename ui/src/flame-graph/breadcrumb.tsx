// The flame graph's breadcrumb: the tree's title and the path of the subtree zoomed to, each a
// button that zooms back out to it, and the "new plan" handle, dragged onto the tree to plan a
// child where it drops.

import type { JSX } from "preact";

import { frameAt, type Laid } from "./laid";
import type { Zoom } from "./zoom";

export function Breadcrumb({
  treeTitle,
  laid,
  zoom,
  handle,
}: {
  treeTitle: string;
  laid: Laid;
  zoom: Zoom;
  /** The handle's pointer handlers (`usePointerInput`). */
  handle: Pick<
    JSX.HTMLAttributes<HTMLSpanElement>,
    "onPointerDown" | "onPointerMove" | "onPointerUp"
  >;
}) {
  const { path, zoomOutTo } = zoom;
  return (
    <nav class="graph-breadcrumb" aria-label="Zoomed subtree">
      <button
        type="button"
        class="crumb"
        onClick={() => zoomOutTo(0)}
        aria-current={path.length === 0}
      >
        {treeTitle}
      </button>
      {path.map((id, k) => {
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
              aria-current={k === path.length - 1}
            >
              {r === undefined ? id : frameAt(laid, r)?.title}
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
        {...handle}
      >
        + New plan
      </span>
    </nav>
  );
}
