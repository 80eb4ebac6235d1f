// Marks on the page's performance timeline for the benchmark's account of how the window opens
// (tests/bench): each is made once, when its moment first happens, so the timeline stays small
// however long the window is open.

/** The moments marked, in the order they happen when the window opens on a tree. */
export type OpeningMark =
  | "flame:preview-received"
  | "flame:outline-asked"
  | "flame:outline-received"
  | "flame:laid-out"
  | "flame:first-frames-painted"
  | "flame:whole-tree-painted";

export function markOnce(name: OpeningMark): void {
  if (performance.getEntriesByName(name, "mark").length === 0) performance.mark(name);
}
