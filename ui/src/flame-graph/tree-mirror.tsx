// The accessible mirror of the flame graph: the tree as `treeitem`s for screen readers and
// keyboard users, since the canvas itself is hidden from them. The view owns the active frame;
// the mirror shows it and reports a pick.

import { useMemo } from "preact/hooks";

import type { FrameOutline_Serialize as FrameOutline } from "../bindings";
import { STATUS_STYLE } from "../status-style";

import { childrenOf } from "./drop";
import type { FlameLayout } from "./layout";

/** The mirror lists every frame up to this many; beyond it, the active frame's neighbourhood. */
const MIRROR_ALL_UP_TO = 400;

/** The element id of a frame's `treeitem`, which the view names as its active descendant. */
export function itemId(id: string): string {
  return `frame-item-${id}`;
}

/**
 * The tree for screen readers and keyboard users: one `treeitem` per frame, with its level,
 * place among siblings and state. A large tree lists the active frame's ancestors, siblings
 * and children rather than every frame.
 */
export function TreeMirror({
  layout: L,
  frames,
  active,
  focus,
  onPick,
}: {
  layout: FlameLayout;
  frames: readonly FrameOutline[];
  active: number;
  focus: number;
  onPick: (rank: number) => void;
}) {
  const ranks = useMemo(() => {
    if (L.count <= MIRROR_ALL_UP_TO) return Array.from({ length: L.count }, (_, r) => r);
    const around = new Set<number>();
    for (let r = active; r >= 0; r = L.parent[r]!) around.add(r);
    const parent = L.parent[active] ?? -1;
    if (parent >= 0)
      childrenOf(L, parent, -1)
        .slice(0, 200)
        .forEach((r) => around.add(r));
    childrenOf(L, active, -1)
      .slice(0, 200)
      .forEach((r) => around.add(r));
    return [...around].sort((a, b) => a - b);
  }, [L, active]);
  return (
    <div class="tree-mirror">
      {ranks.map((r) => {
        const frame = frames[L.source[r]!]!;
        const parent = L.parent[r]!;
        const siblings = parent >= 0 ? childrenOf(L, parent, -1) : [r];
        return (
          <div
            key={frame.id}
            id={itemId(frame.id)}
            role="treeitem"
            data-frame-id={frame.id}
            data-rolled-back={frame.rolled_back_at !== null ? "true" : undefined}
            aria-level={L.depth[r]! + 1}
            aria-setsize={siblings.length}
            aria-posinset={siblings.indexOf(r) + 1}
            aria-selected={r === active}
            aria-current={r === focus ? "true" : undefined}
            aria-expanded={L.firstChild[r]! >= 0 ? true : undefined}
            onClick={() => onPick(r)}
          >
            {frame.title}, {STATUS_STYLE[frame.status].label}
            {frame.rolled_back_at !== null ? ", rolled back" : ""}
            {r === focus ? ", focused" : ""}
          </div>
        );
      })}
    </div>
  );
}
