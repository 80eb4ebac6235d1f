// For the tests of the chat pane's header: `FrameHeader` drawn on its own, with no panel open
// and every action but focusing a frame doing nothing.

import { render } from "preact";

import type {
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { FrameHeader } from "./frame-header";

/** The header of `frame` in `outline`, drawn into the document; `onFocus` hears the crumbs. */
export function mountHeader(
  outline: TreeOutline,
  frame: FrameOutline,
  onFocus: (id: string) => void = () => {},
): HTMLElement {
  const root = document.createElement("div");
  document.body.append(root);
  const nothing = () => {};
  render(
    <FrameHeader
      outline={outline}
      frame={frame}
      detail={null}
      canPop={false}
      inspecting={false}
      showingChanges={false}
      onPop={nothing}
      onToggleInspector={nothing}
      onToggleChanges={nothing}
      onExport={nothing}
      onFocus={onFocus}
    />,
    root,
  );
  return root;
}
