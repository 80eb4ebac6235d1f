// The composer's list of slash commands while a command's name is typed: Up and Down move the
// highlight, Tab or Enter takes the highlighted command, Escape closes the list, and a click takes
// the clicked one. Focus stays in the textarea throughout; the textarea points at the highlighted
// option with `aria-activedescendant`, as a listbox that is never focused itself should.

import { useState } from "preact/hooks";

import { completions, type SlashCommand } from "./slash";

/** The id of the list, for the textarea's `aria-controls`. */
export const COMPLETION_LIST_ID = "slash-completions";

/** The id of a command's option, for the textarea's `aria-activedescendant`. */
export function optionId(command: SlashCommand): string {
  return `slash-option-${command.name}`;
}

/** What a key does to an open list of `count` options whose `active` one is highlighted. */
export type ListKey =
  { kind: "move"; to: number } | { kind: "accept" } | { kind: "close" } | { kind: "none" };

/** Reads a key press for an open list; pure, so the keys' rules are tested on their own. */
export function listKey(
  key: string,
  modifiers: { shift: boolean; composing: boolean },
  count: number,
  active: number,
): ListKey {
  if (count === 0 || modifiers.composing) return { kind: "none" };
  switch (key) {
    case "ArrowDown":
      return { kind: "move", to: (active + 1) % count };
    case "ArrowUp":
      return { kind: "move", to: (active - 1 + count) % count };
    case "Tab":
    case "Enter":
      // Shift+Enter stays a new line and Shift+Tab moves focus back, as everywhere else.
      return modifiers.shift ? { kind: "none" } : { kind: "accept" };
    case "Escape":
      return { kind: "close" };
    default:
      return { kind: "none" };
  }
}

/** The list's state for the text it was made for; any other text starts afresh. */
interface ListState {
  text: string;
  active: number;
  closed: boolean;
}

/** The open list for the composer's `text`, and the key handler that drives it. */
export interface Completions {
  /** The commands on offer; empty when the list is closed. */
  offered: SlashCommand[];
  /** The index of the highlighted command in `offered`. */
  active: number;
  /** The highlighted command, if the list is open. */
  highlighted: SlashCommand | null;
  /** Handles a key for the list; true when the list took it (the default is then prevented). */
  onKeyDown: (event: KeyboardEvent) => boolean;
  highlight: (index: number) => void;
}

/**
 * Follows the composer's text. `accept` is called with the command that Tab, Enter or a click
 * takes. Enter on a command already typed in full is left to the composer, which sends it, so
 * `/pop` and Enter still pops at once.
 */
export function useCompletions(text: string, accept: (command: SlashCommand) => void): Completions {
  const [state, setState] = useState<ListState>({ text: "", active: 0, closed: false });
  const current = state.text === text ? state : { text, active: 0, closed: false };
  const offered = current.closed ? [] : completions(text);
  const active = Math.min(current.active, Math.max(offered.length - 1, 0));
  const highlighted = offered[active] ?? null;

  const onKeyDown = (event: KeyboardEvent): boolean => {
    const action = listKey(
      event.key,
      { shift: event.shiftKey, composing: event.isComposing },
      offered.length,
      active,
    );
    switch (action.kind) {
      case "none":
        return false;
      case "move":
        setState({ ...current, active: action.to });
        break;
      case "close":
        setState({ ...current, closed: true });
        break;
      case "accept":
        if (highlighted === null) return false;
        if (event.key === "Enter" && text === `/${highlighted.name}`) return false;
        accept(highlighted);
        break;
    }
    event.preventDefault();
    return true;
  };

  return {
    offered,
    active,
    highlighted,
    onKeyDown,
    highlight: (index) => setState({ ...current, active: index }),
  };
}

/** The list itself, above the composer. */
export function CompletionList({
  list,
  onPick,
}: {
  list: Completions;
  onPick: (command: SlashCommand) => void;
}) {
  if (list.offered.length === 0) return null;
  return (
    <ul
      id={COMPLETION_LIST_ID}
      class="completions"
      role="listbox"
      aria-label="Slash commands"
      data-testid="completions"
    >
      {list.offered.map((command, i) => (
        // The options take clicks but never focus: a mouse press would otherwise pull focus out
        // of the textarea, and the keyboard already reaches them through the textarea.
        <li
          key={command.name}
          id={optionId(command)}
          role="option"
          aria-selected={i === list.active}
          class={i === list.active ? "completion active" : "completion"}
          onMouseDown={(e) => e.preventDefault()}
          onMouseMove={() => i !== list.active && list.highlight(i)}
          onClick={() => onPick(command)}
        >
          <code>{command.usage}</code> <span class="muted">{command.summary}</span>
        </li>
      ))}
    </ul>
  );
}
