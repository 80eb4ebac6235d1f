// What the command palette and the search dialog share: a modal with a query box that keeps the
// focus, a list moved through with Up and Down, Enter to pick and Escape (or a click outside) to
// close, and the focus given back where it was when the dialog closes.

import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** Calls `onOpen` when a key `isKey` accepts is pressed anywhere in the window. */
export function useWindowKey(isKey: (event: KeyboardEvent) => boolean, onOpen: () => void) {
  const latest = useRef({ isKey, onOpen });
  latest.current = { isKey, onOpen };
  useEffect(() => {
    const listener = (event: KeyboardEvent) => {
      if (!latest.current.isKey(event)) return;
      event.preventDefault();
      latest.current.onOpen();
    };
    // In the capture phase, so a focused control that handles keys itself cannot swallow it.
    window.addEventListener("keydown", listener, true);
    return () => window.removeEventListener("keydown", listener, true);
  }, []);
}

/** The dialog around a pick list; a press on the backdrop outside it closes it. */
export function PickDialog({
  label,
  testId,
  className,
  onClose,
  children,
}: {
  label: string;
  testId: string;
  className: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  return (
    <div
      class="dialog-backdrop palette-backdrop"
      onMouseDown={(e) => e.target === e.currentTarget && onClose()}
    >
      <div
        class={`dialog palette ${className}`.trim()}
        role="dialog"
        aria-modal="true"
        aria-label={label}
        data-testid={testId}
      >
        {children}
      </div>
    </div>
  );
}

/**
 * The query box's focus while the dialog is open: taken when it opens, taken back on a blur (a
 * click on the list or the padding), and given back to where it was by `giveBack`. `release`
 * marks the dialog as closing without giving it back, for a choice that moves the focus itself.
 */
export function useHeldFocus() {
  const input = useRef<HTMLInputElement>(null);
  const before = useRef<Element | null>(document.activeElement);
  // Set as the dialog closes, so giving focus back is not taken for a blur to undo.
  const closing = useRef(false);
  useEffect(() => input.current?.focus(), []);
  return {
    input,
    release: () => {
      closing.current = true;
    },
    giveBack: () => {
      closing.current = true;
      if (before.current instanceof HTMLElement && before.current.isConnected) {
        before.current.focus();
      }
    },
    onBlur: () => {
      if (!closing.current) input.current?.focus();
    },
  };
}

/** What `useHeldFocus` gives: the query box's focus, held while the dialog is open. */
export type HeldFocus = ReturnType<typeof useHeldFocus>;

/** What `pickListKeys` needs to know of the list and what the keys do. */
export type PickKeys = Parameters<typeof pickListKeys>[0];

/** A query box wired to the list under it, as `usePickList` makes it. */
export interface PickList {
  held: HeldFocus;
  /** The attributes of the list: the listbox the query box controls. */
  listbox: { id: string; role: "listbox" };
  /** The highlighted option's element id, if one is. */
  activeId: string | undefined;
  onKeyDown: (event: KeyboardEvent) => void;
  /**
   * The attributes that make entry `index` an option: selected when it is the highlighted one,
   * highlighted as the pointer moves over it, chosen by `choose` on a click. The options take
   * clicks but never the focus, which stays in the query box.
   */
  option: (index: number, choose: () => void) => JSX.HTMLAttributes<HTMLLIElement>;
}

/**
 * Wires the query box that keeps the focus `held` holds to the list `listId`, whose option
 * `activeId` is highlighted (kept in sight as Up and Down move it) and which `keys` moves through.
 */
export function usePickList(
  held: HeldFocus,
  listId: string,
  activeId: string | undefined,
  keys: PickKeys,
): PickList {
  useEffect(() => {
    if (activeId === undefined) return;
    document.getElementById(activeId)?.scrollIntoView?.({ block: "nearest" });
  }, [activeId]);
  return {
    held,
    listbox: { id: listId, role: "listbox" },
    activeId,
    onKeyDown: pickListKeys(keys),
    option: (index, choose) => ({
      role: "option",
      "aria-selected": index === keys.at,
      onMouseDown: (e) => e.preventDefault(),
      onMouseMove: () => index !== keys.at && keys.setActive(index),
      onClick: choose,
    }),
  };
}

/** The query box: a combobox over the list `list` wires it to. */
export function PickQuery({
  list,
  type,
  label,
  placeholder,
  value,
  testId,
  onInput,
}: {
  list: PickList;
  type: "text" | "search";
  label: string;
  placeholder: string;
  value: string;
  testId: string;
  onInput: (query: string) => void;
}) {
  return (
    <input
      ref={list.held.input}
      type={type}
      class="palette-query"
      role="combobox"
      aria-expanded="true"
      aria-autocomplete="list"
      aria-controls={list.listbox.id}
      aria-activedescendant={list.activeId}
      aria-label={label}
      placeholder={placeholder}
      spellcheck={false}
      autocomplete="off"
      value={value}
      data-testid={testId}
      onInput={(e) => onInput(e.currentTarget.value)}
      onKeyDown={list.onKeyDown}
      onBlur={list.held.onBlur}
    />
  );
}

/**
 * The query box's keys over a list of `count` entries with `at` highlighted: Up and Down move the
 * highlight round the list, Enter picks, Escape closes, and with `trapTab` Tab stays in the box.
 * Keys it handles go no further; a key composing text is left alone.
 */
export function pickListKeys({
  count,
  at,
  setActive,
  onEnter,
  onEscape,
  trapTab = false,
}: {
  count: number;
  at: number;
  setActive: (index: number) => void;
  onEnter: () => void;
  onEscape: () => void;
  trapTab?: boolean;
}): (event: KeyboardEvent) => void {
  return (event) => {
    if (event.isComposing) return;
    switch (event.key) {
      case "ArrowDown":
        if (count > 0) setActive((at + 1) % count);
        break;
      case "ArrowUp":
        if (count > 0) setActive((at - 1 + count) % count);
        break;
      case "Enter":
        onEnter();
        break;
      case "Escape":
        onEscape();
        break;
      case "Tab":
        if (!trapTab) return;
        break;
      default:
        return;
    }
    event.preventDefault();
    event.stopPropagation();
  };
}
