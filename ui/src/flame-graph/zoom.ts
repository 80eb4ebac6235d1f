// The flame graph's zoom into a subtree: the view spans the frame zoomed to, and the breadcrumb
// shows the path from the root to it, by frame id, so it outlives a reload of the tree.

import { useState } from "preact/hooks";

import type { FrameOutline_Serialize as FrameOutline } from "../bindings";
import type { Laid } from "./laid";

export interface Zoom {
  /** The ids of the frames from the root's child down to the frame zoomed to. */
  path: string[];
  /** Zooms to the frame at `rank`. */
  zoomTo: (rank: number) => void;
  /** Zooms back out to the `length`th frame of the path (0: the whole tree). */
  zoomOutTo: (length: number) => void;
}

export function useZoom(
  laid: Laid,
  frameAt: (rank: number) => FrameOutline | undefined,
  setView: (x0: number, x1: number) => void,
): Zoom {
  const [path, setPath] = useState<string[]>([]);
  const zoomTo = (rank: number) => {
    const frame = frameAt(rank);
    if (!frame) return;
    setView(laid.layout.x0[rank]!, laid.layout.x1[rank]!);
    const ids: string[] = [];
    for (let r = rank; r > 0; r = laid.layout.parent[r]!) ids.unshift(frameAt(r)!.id);
    setPath(ids);
  };
  const zoomOutTo = (length: number) => {
    const kept = path.slice(0, length);
    const last = kept.length > 0 ? laid.rankOf(kept[kept.length - 1]!) : 0;
    setPath(kept);
    if (last === undefined) setView(0, 1);
    else setView(laid.layout.x0[last]!, laid.layout.x1[last]!);
  };
  return { path, zoomTo, zoomOutTo };
}
