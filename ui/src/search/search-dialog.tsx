// The search over every tree (Ctrl+F or Ctrl+K, or the palette's "Search…"): a query box whose
// words the backend finds in every message and every frame's title and results (an FTS5 index;
// see flame-store's search.rs), the hits with their frame's path, tree and snippet, and choosing
// one focuses its frame and scrolls the conversation to the message. Snippets arrive as the
// backend's parts and are drawn as text nodes; the matched words are spans.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { ApiError, SearchHit } from "../bindings";
import { ErrorLine } from "../error-line";
import { PickDialog, PickQuery, useHeldFocus, usePickList, useWindowKey } from "../pick-dialog";

/** How long typing must pause before the words are searched for. */
export const SEARCH_DEBOUNCE_MS = 150;

/** How many hits a search asks for (the backend allows up to 200). */
export const SEARCH_LIMIT = 50;

/** How long a chosen message is waited for: its frame's conversation is read after the focus. */
export const REVEAL_WAIT_MS = 5000;

/** How long the chosen message is kept in view and marked, while its conversation settles. */
export const REVEAL_HOLD_MS = 1500;

const LIST_ID = "search-hits";

/** Ctrl+F or Ctrl+K (Cmd on a Mac), without Shift or Alt. */
export function isSearchKey(event: KeyboardEvent): boolean {
  if (!(event.ctrlKey || event.metaKey) || event.shiftKey || event.altKey) return false;
  const key = event.key.toLowerCase();
  return key === "f" || key === "k";
}

/** Calls `onOpen` when the search's key is pressed anywhere in the window. */
export function useSearchKey(onOpen: () => void) {
  useWindowKey(isSearchKey, onOpen);
}

/**
 * Brings message `id` into view once the conversation shows it, and marks it for a moment. The
 * chat pane reads the focused frame's messages after the focus moves and scrolls to their end
 * when they arrive, so the message is waited for (up to `REVEAL_WAIT_MS`) and then kept in view
 * for `REVEAL_HOLD_MS`. Returns a function that stops it.
 */
export function revealMessage(id: number): () => void {
  const selector = `[data-message-id="${id}"]`;
  let started: number | null = null;
  let found: { element: HTMLElement; at: number } | null = null;
  let frame = 0;
  let unmark = 0;
  const step = (now: number) => {
    started ??= now;
    const element = document.querySelector<HTMLElement>(selector);
    if (element === null) {
      if (now - started < REVEAL_WAIT_MS) frame = requestAnimationFrame(step);
      return;
    }
    if (found?.element !== element) {
      found = { element, at: now };
      element.classList.add("search-revealed");
      window.clearTimeout(unmark);
      unmark = window.setTimeout(
        () => element.classList.remove("search-revealed"),
        REVEAL_HOLD_MS * 2,
      );
      element.scrollIntoView?.({ block: "center" });
    } else if (!inSight(element)) {
      element.scrollIntoView?.({ block: "center" });
    }
    if (now - found.at < REVEAL_HOLD_MS) frame = requestAnimationFrame(step);
  };
  frame = requestAnimationFrame(step);
  return () => cancelAnimationFrame(frame);
}

/** Whether `element` is inside the visible part of the box that scrolls it. */
function inSight(element: HTMLElement): boolean {
  const box = element.closest("[data-testid=messages]") ?? document.documentElement;
  const shown = box.getBoundingClientRect();
  const rect = element.getBoundingClientRect();
  return rect.bottom > shown.top && rect.top < shown.bottom;
}

/** What the dialog shows below the query box. */
type Found =
  | { state: "empty" }
  | { state: "searching"; hits: SearchHit[] }
  | { state: "ready"; query: string; hits: SearchHit[] }
  | { state: "failed"; error: ApiError };

function hitKey(hit: SearchHit): string {
  return hit.place.kind === "message" ? `m${hit.place.id}` : `r${hit.frame}`;
}

/** Where a hit is within its frame, in words. */
function placeLabel(hit: SearchHit): string {
  if (hit.place.kind === "results") return "title or results";
  switch (hit.place.role) {
    case "user":
      return "your message";
    case "assistant":
      return "reply";
    case "tool":
      return "tool result";
    case "note":
      return "note";
  }
}

function Snippet({ hit }: { hit: SearchHit }) {
  return (
    <span class="search-snippet" data-testid="search-snippet">
      {hit.snippet.map((part, i) =>
        part.matched ? (
          <span key={i} class="search-match">
            {part.text}
          </span>
        ) : (
          part.text
        ),
      )}
    </span>
  );
}

export function SearchDialog({
  backend,
  onChoose,
  onClose,
  delay = SEARCH_DEBOUNCE_MS,
}: {
  backend: Backend;
  /** A hit was chosen; the dialog has closed. */
  onChoose: (hit: SearchHit) => void;
  onClose: () => void;
  /** How long typing must pause before searching (tests pass 0). */
  delay?: number;
}) {
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<Found>({ state: "empty" });
  const [active, setActive] = useState(0);
  const held = useHeldFocus();
  // Each search's number: an answer to anything but the newest one is dropped.
  const asked = useRef(0);

  useEffect(() => {
    const number = ++asked.current;
    if (query.trim() === "") {
      setFound({ state: "empty" });
      return;
    }
    setFound((shown) => ({
      state: "searching",
      hits: shown.state === "ready" || shown.state === "searching" ? shown.hits : [],
    }));
    const timer = window.setTimeout(() => {
      void backend.search(query, null, SEARCH_LIMIT).then((answer) => {
        if (number !== asked.current) return;
        setActive(0);
        setFound(
          answer.status === "ok"
            ? { state: "ready", query, hits: answer.data }
            : { state: "failed", error: answer.error },
        );
      });
    }, delay);
    return () => window.clearTimeout(timer);
  }, [backend, query, delay]);

  const hits = found.state === "ready" || found.state === "searching" ? found.hits : [];
  const at = Math.min(active, Math.max(hits.length - 1, 0));
  const highlighted = hits[at] ?? null;

  // Closed without a choice, the focus goes back where it was; a choice moves it to the frame.
  const close = () => {
    held.giveBack();
    onClose();
  };

  const choose = (hit: SearchHit | null) => {
    if (hit === null) return;
    held.release();
    onClose();
    onChoose(hit);
  };

  const activeId = highlighted === null ? undefined : `search-hit-${hitKey(highlighted)}`;
  const list = usePickList(held, LIST_ID, activeId, {
    count: hits.length,
    at,
    setActive,
    onEnter: () => choose(highlighted),
    onEscape: close,
  });

  return (
    <PickDialog
      label="Search every tree"
      testId="search-dialog"
      className="search-dialog"
      onClose={close}
    >
      <PickQuery
        list={list}
        type="search"
        label="Words to find"
        placeholder="Find words in every message and result"
        value={query}
        testId="search-query"
        onInput={setQuery}
      />
      <ul
        {...list.listbox}
        class="palette-options search-hits"
        aria-label="Hits"
        aria-busy={found.state === "searching"}
        data-testid="search-hits"
      >
        {hits.map((hit, i) => (
          <li
            key={hitKey(hit)}
            id={`search-hit-${hitKey(hit)}`}
            {...list.option(i, () => choose(hit))}
            class={`search-hit${i === at ? " active" : ""}`}
            data-frame-id={hit.frame}
            data-message-id={hit.place.kind === "message" ? hit.place.id : undefined}
          >
            <span class="search-path" data-testid="search-path">
              {hit.path.slice(0, -1).map((title, j) => (
                <span key={j} class="search-ancestor">
                  {title} ›{" "}
                </span>
              ))}
              <strong>{hit.path[hit.path.length - 1]}</strong>
            </span>
            <span class="search-where muted">
              {placeLabel(hit)}
              {hit.tree_title !== hit.path[0] && ` · tree ${hit.tree_title}`}
            </span>
            <Snippet hit={hit} />
          </li>
        ))}
      </ul>
      {found.state === "failed" && <ErrorLine error={found.error} testId="search-error" />}
      {found.state === "ready" && hits.length === 0 && (
        <p class="palette-empty muted" data-testid="search-empty">
          Nothing found for “{found.query}”.
        </p>
      )}
      {found.state === "ready" && hits.length >= SEARCH_LIMIT && (
        <p class="palette-more muted">The first {hits.length} hits; add words to narrow them.</p>
      )}
      {found.state === "empty" && (
        <p class="palette-empty muted">
          Whole words, ignoring case and accents; the last word may be the start of one.
        </p>
      )}
    </PickDialog>
  );
}
