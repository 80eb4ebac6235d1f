// The flame graph's frame menu (context menu): the actions on one frame, with their keys. The
// view says where it opens and what a pick asks for.

import type { JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";

import type { FrameOutline_Serialize as FrameOutline } from "../bindings";

/** What the menu offers on a frame; each becomes a `FrameRequest` of the same kind. */
export type FrameMenuAction =
  | "push"
  | "plan"
  | "start"
  | "pop"
  | "resume"
  | "retry"
  | "invalidate"
  | "edit"
  | "delete"
  | "export";

/** What the person asked for on a frame; the app turns each into a dialog or a command. */
export type FrameRequest =
  | { kind: FrameMenuAction; frame: FrameOutline }
  | { kind: "plan-at"; frame: FrameOutline; position: number | null };

const MENU: { kind: FrameMenuAction; label: string; key: string }[] = [
  { kind: "push", label: "Push child…", key: "P" },
  { kind: "plan", label: "Plan child…", key: "N" },
  { kind: "start", label: "Start", key: "S" },
  { kind: "pop", label: "Pop…", key: "O" },
  { kind: "resume", label: "Resume", key: "" },
  { kind: "retry", label: "Retry", key: "" },
  { kind: "invalidate", label: "Invalidate…", key: "I" },
  { kind: "edit", label: "Edit…", key: "E" },
  { kind: "delete", label: "Delete…", key: "Del" },
  { kind: "export", label: "Export…", key: "" },
];

export function FrameMenu({
  frame,
  x,
  y,
  onPick,
  onClose,
}: {
  frame: FrameOutline;
  x: number;
  y: number;
  onPick: (kind: FrameMenuAction) => void;
  onClose: () => void;
}) {
  const menu = useRef<HTMLDivElement>(null);
  useEffect(() => menu.current?.querySelector("button")?.focus(), []);
  const style: JSX.CSSProperties = { left: `${x}px`, top: `${y + 34}px` };
  return (
    <div
      ref={menu}
      class="context-menu"
      role="menu"
      aria-label={`Actions on ${frame.title}`}
      style={style}
      data-testid="context-menu"
      onKeyDown={(event) => {
        if (event.key === "Escape") onClose();
        if (event.key === "ArrowDown" || event.key === "ArrowUp") {
          event.preventDefault();
          const items = [...(event.currentTarget as HTMLElement).querySelectorAll("button")];
          const at = items.indexOf(document.activeElement as HTMLButtonElement);
          const next = (at + (event.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
          items[next]?.focus();
        }
      }}
    >
      {MENU.map((item) => (
        <button key={item.kind} type="button" role="menuitem" onClick={() => onPick(item.kind)}>
          <span>{item.label}</span>
          <kbd>{item.key}</kbd>
        </button>
      ))}
    </div>
  );
}
