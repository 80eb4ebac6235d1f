// The command palette (Ctrl+Shift+P): every action of the window's menus, buttons and keys in one
// list, filtered as one types (see `match.ts`), each with its shortcut. Up and Down move the
// highlight, Enter runs the highlighted action, Escape (or a click outside) closes it. Focus stays
// in the query box, which points at the highlighted option with `aria-activedescendant` as the
// composer's completion list does; Tab does not leave the palette while it is open. What may be
// done with the focused frame is read from the backend when the palette opens, and an action it
// would refuse is shown greyed with the reason.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { TreeListEntry } from "../bindings";
import { PickDialog, PickQuery, useHeldFocus, usePickList, useWindowKey } from "../pick-dialog";
import { paletteActions, type Allowed, type PaletteAction, type PaletteContext } from "./actions";
import { rank, type Ranked } from "./match";

/** Entries drawn at most; the rest are counted, and typing narrows them. */
export const MAX_SHOWN = 100;

/** The id of the list, for the query box's `aria-controls`. */
const LIST_ID = "palette-options";

/** The id of an entry's option, for the query box's `aria-activedescendant`. */
function optionId(action: PaletteAction): string {
  return `palette-option-${action.id}`;
}

/** Whether `event` is the palette's key: Ctrl+Shift+P (Cmd+Shift+P on a Mac). */
export function isPaletteKey(event: KeyboardEvent): boolean {
  return (
    (event.ctrlKey || event.metaKey) &&
    event.shiftKey &&
    !event.altKey &&
    (event.code === "KeyP" || event.key.toLowerCase() === "p")
  );
}

/** Calls `onOpen` when the palette's key is pressed anywhere in the window. */
export function usePaletteKey(onOpen: () => void) {
  useWindowKey(isPaletteKey, onOpen);
}

/**
 * The entries matching `query`, best first, those that can be done now before those that cannot
 * (each group keeping its rank), so Enter takes the best one that can be done.
 */
export function offered(query: string, actions: readonly PaletteAction[]): Ranked<PaletteAction>[] {
  const ranked = rank(query, actions, (a) => a.label);
  return [
    ...ranked.filter((r) => r.item.disabled === null),
    ...ranked.filter((r) => r.item.disabled !== null),
  ];
}

/** The label with the characters the query matched marked. */
function Label({ text, positions }: { text: string; positions: readonly number[] }) {
  if (positions.length === 0) return <>{text}</>;
  const marked = new Set(positions);
  const parts: { text: string; mark: boolean }[] = [];
  Array.from(text).forEach((char, i) => {
    const mark = marked.has(i);
    const last = parts[parts.length - 1];
    if (last !== undefined && last.mark === mark) last.text += char;
    else parts.push({ text: char, mark });
  });
  return <>{parts.map((part, i) => (part.mark ? <mark key={i}>{part.text}</mark> : part.text))}</>;
}

export function CommandPalette({
  backend,
  context,
  onClose,
}: {
  backend: Backend;
  /** The window, but for what the palette reads itself when it opens. */
  context: Omit<PaletteContext, "allowed" | "trees">;
  onClose: () => void;
}) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const [allowed, setAllowed] = useState<Allowed>({ state: "reading" });
  const [trees, setTrees] = useState<TreeListEntry[]>([]);
  const held = useHeldFocus();

  const focus = context.outline?.tree.focus ?? null;
  useEffect(() => {
    let live = true;
    if (focus !== null) {
      void backend.frameDetail(focus).then((answer) => {
        if (!live) return;
        setAllowed(
          answer.status === "ok"
            ? { state: "ready", actions: answer.data.actions }
            : { state: "failed", message: answer.error.message },
        );
      });
    }
    void backend.listTrees().then((answer) => {
      if (live && answer.status === "ok") setTrees(answer.data);
    });
    return () => {
      live = false;
    };
  }, [backend, focus]);

  const matches = offered(query, paletteActions({ ...context, allowed, trees }));
  const shown = matches.slice(0, MAX_SHOWN);
  const at = Math.min(active, Math.max(shown.length - 1, 0));
  const highlighted = shown[at]?.item ?? null;

  const close = (then?: PaletteAction) => {
    held.giveBack();
    onClose();
    // After the palette is gone, so a dialog the action opens takes the focus.
    then?.run();
  };

  const choose = (action: PaletteAction | null) => {
    if (action !== null && action.disabled === null) close(action);
  };

  const activeId = highlighted === null ? undefined : optionId(highlighted);
  const list = usePickList(held, LIST_ID, activeId, {
    count: shown.length,
    at,
    setActive,
    onEnter: () => choose(highlighted),
    onEscape: () => close(),
    // The query box is the palette's one place for focus: Tab stays in it.
    trapTab: true,
  });

  return (
    <PickDialog label="Command palette" testId="palette" className="" onClose={() => close()}>
      <PickQuery
        list={list}
        type="text"
        label="Action"
        placeholder="Type an action or a frame's title"
        value={query}
        testId="palette-query"
        onInput={(text) => {
          setQuery(text);
          setActive(0);
        }}
      />
      <ul
        {...list.listbox}
        class="palette-options"
        aria-label="Actions"
        data-testid="palette-options"
      >
        {shown.map(({ item, match }, i) => (
          <li
            key={item.id}
            id={optionId(item)}
            {...list.option(i, () => choose(item))}
            aria-disabled={item.disabled !== null}
            class={`palette-option${i === at ? " active" : ""}${item.disabled !== null ? " disabled" : ""}`}
            title={item.disabled ?? undefined}
            data-action={item.id}
          >
            <span class="palette-label">
              <Label text={item.label} positions={match.positions} />
            </span>
            <span class="palette-detail muted">
              {item.disabled !== null ? item.disabled : (item.detail ?? "")}
            </span>
            {item.shortcut.length > 0 && (
              <span class="palette-shortcut">
                {item.shortcut.map((key) => (
                  <kbd key={key}>{key}</kbd>
                ))}
              </span>
            )}
          </li>
        ))}
      </ul>
      {shown.length === 0 && (
        <p class="palette-empty muted" data-testid="palette-empty">
          No action matches “{query}”.
        </p>
      )}
      {matches.length > shown.length && (
        <p class="palette-more muted" data-testid="palette-more">
          {matches.length - shown.length} more; type to narrow them.
        </p>
      )}
    </PickDialog>
  );
}
