// Which of a conversation's messages the chat pane draws. A frame may hold thousands of messages
// (the 100k-frame tree focuses one with 4,938), and drawing every one as Markdown froze
// the window for seconds and kept tens of thousands of elements alive. The pane draws a window
// of at most `WINDOW_SIZE` consecutive messages: the newest when a conversation opens, older ones
// as the person scrolls up (newer ones again as they scroll down), and those around a message
// the search asks to see. Heights are never estimated: when the window moves, the pane keeps the
// message at the top of the view where it was (`useMessageWindow`), so nothing on screen jumps.
//
// The pane does not hold every message either: a conversation opens with its newest page, and
// the window asks for the page before the oldest held (`Earlier`) as it comes near it, or for
// every one from a little before a message it is asked to show. Those are put in front of the
// held ones, and the window's indexes move with them, so it keeps drawing the same messages.

import { useLayoutEffect, useRef, useState } from "preact/hooks";

/** The messages drawn: indexes `start` (inclusive) to `end` (exclusive) of the conversation. */
export interface MessageRange {
  start: number;
  end: number;
}

/** The most messages drawn at once. */
export const WINDOW_SIZE = 120;
/** How many messages the window moves by when the view comes near one of its ends. */
export const WINDOW_STEP = 40;
/** How near an end of the drawn messages, in CSS pixels, the view must come to move the window. */
export const EDGE_PX = 800;
/** How near the bottom, in CSS pixels, counts as at the bottom (the pane then follows new ones). */
export const BOTTOM_PX = 48;

/** The newest messages of a conversation of `count`. */
export function newestRange(count: number): MessageRange {
  return { start: Math.max(0, count - WINDOW_SIZE), end: count };
}

/** `range` made valid for a conversation now of `count` messages. */
export function clampRange(range: MessageRange, count: number): MessageRange {
  const end = Math.min(Math.max(range.end, 0), count);
  const start = Math.min(Math.max(range.start, 0), end);
  return start === range.start && end === range.end ? range : { start, end };
}

/**
 * The window moved `WINDOW_STEP` messages back. Newer messages are let go from its end while it
 * holds more than `WINDOW_SIZE`, but never `keep` or one before it (those near the view stay).
 */
export function olderRange(range: MessageRange, keep: number): MessageRange {
  const start = Math.max(0, range.start - WINDOW_STEP);
  const end = Math.min(range.end, Math.max(keep + 1, start + WINDOW_SIZE));
  return { start, end };
}

/**
 * The window moved `WINDOW_STEP` messages on, in a conversation of `count`. Older messages are
 * let go from its start while it holds more than `WINDOW_SIZE`, but never `keep` or one after it.
 */
export function newerRange(range: MessageRange, count: number, keep: number): MessageRange {
  const end = Math.min(count, range.end + WINDOW_STEP);
  const start = Math.max(range.start, Math.min(keep, end - WINDOW_SIZE));
  return { start, end };
}

/** A window of a conversation of `count` with message `index` in its middle. */
export function rangeAround(index: number, count: number): MessageRange {
  const start = Math.max(0, Math.min(index - WINDOW_SIZE / 2, count - WINDOW_SIZE));
  return { start, end: Math.min(count, start + WINDOW_SIZE) };
}

/**
 * A request to draw message `message` (an id) and scroll to it. Each request is a new object,
 * served once, by the pane whose conversation holds the message.
 */
export interface MessageRequest {
  message: number;
}

/** The element of the pane's list that draws message `id`. */
function messageElement(list: HTMLElement, id: number): HTMLElement | null {
  return list.querySelector<HTMLElement>(`:scope > [data-message-id="${id}"]`);
}

/**
 * Where the drawn messages are against the view, as indexes into the window: the first and the
 * last to keep (those within `2 * EDGE_PX` of the view: letting go only of messages further off
 * means a move never brings the other end of the window near the view, so moves cannot
 * alternate), and the first message in view with where its top is below the view's top. An
 * index is -1 when no message is there (nothing is laid out).
 */
function sight(list: HTMLElement) {
  const box = list.getBoundingClientRect();
  const drawn = list.querySelectorAll<HTMLElement>(":scope > [data-message-id]");
  let keepFirst = -1;
  let keepLast = -1;
  let top: { id: number; top: number } | null = null;
  drawn.forEach((element, k) => {
    const rect = element.getBoundingClientRect();
    if (rect.bottom > box.top - 2 * EDGE_PX && rect.top < box.bottom + 2 * EDGE_PX) {
      if (keepFirst < 0) keepFirst = k;
      keepLast = k;
    }
    if (top === null && rect.bottom > box.top && rect.top < box.bottom) {
      top = { id: Number(element.dataset["messageId"]), top: rect.top - box.top };
    }
  });
  return { keepFirst, keepLast, top };
}

/** The messages of the conversation before those the window is given, not read yet. */
export interface Earlier {
  /** How many there are. */
  count: number;
  /**
   * Reads the page of them just before the held ones, or with `reach` (a message id) every one
   * from a little before that message; they then come in front of the ids the window is given.
   */
  read: (reach: number | null) => void;
}

/** A conversation held whole. */
const NO_EARLIER: Earlier = { count: 0, read: () => undefined };

/** Requests already served, by any pane: a pane drawn later leaves them be. */
const served = new WeakSet<MessageRequest>();

export interface MessageWindow {
  /** The messages to draw. */
  range: MessageRange;
  /** Call on the list's scroll events. */
  onScroll: () => void;
  /** Draws `WINDOW_STEP` older messages (the pane's "earlier messages" button). */
  showOlder: () => void;
  /** Draws the newest messages and follows them again (the pane's "newest" button). */
  showNewest: () => void;
}

/**
 * The window over `ids` (the ids of the conversation's messages held, oldest first; `earlier`
 * says how many come before them and reads them) of the scrolling `list`. `conversation` names
 * the conversation (a new one starts at its newest messages), `follow` changes whenever the pane
 * must show its end again (the person sent a message), and `request` asks for a message to be
 * drawn and scrolled to (the search marks it once it is drawn).
 *
 * While the view is at the bottom of the list and the window ends at the newest message, the
 * pane follows the conversation: after every render (a new message, the reply streaming in) it
 * is scrolled to the end.
 */
export function useMessageWindow(
  list: { current: HTMLElement | null },
  conversation: string,
  ids: readonly number[],
  follow: unknown,
  request: MessageRequest | null,
  earlier: Earlier = NO_EARLIER,
): MessageWindow {
  const count = ids.length;
  const first = ids[0];
  // The window as last drawn, for the conversation of `count` messages from `first`. It is a ref,
  // derived afresh during each render; a move the person makes (scrolling) sets it and redraws.
  const held = useRef({ conversation, count, first, range: newestRange(count), follow });
  const [, redraw] = useState(0);
  const following = useRef(true);
  // The message at the top of the view when the window last moved, and where it was then: after
  // the move is drawn, the view is scrolled so it is there again.
  const anchor = useRef<{ id: number; top: number } | null>(null);
  // A message asked for, until the conversation holds it (its frame's messages are read after
  // the focus moves); then the message to scroll to once drawn.
  const pending = useRef<MessageRequest | null>(null);
  const reveal = useRef<number | null>(null);

  let before = held.current;
  if (
    before.conversation === conversation &&
    before.first !== first &&
    before.first !== undefined
  ) {
    // Older messages were put in front of those held: the same messages keep their place.
    const shift = ids.indexOf(before.first);
    if (shift > 0) {
      const { start, end } = before.range;
      before = {
        ...before,
        count: before.count + shift,
        range: { start: start + shift, end: end + shift },
      };
    }
  }
  let range: MessageRange;
  if (before.conversation !== conversation || before.follow !== follow) {
    // Another frame in focus, or the person sent a message: the newest messages, followed.
    following.current = true;
    anchor.current = null;
    range = newestRange(count);
  } else if (following.current) {
    // Following: the window ends at the newest message; new ones push the oldest out.
    const start =
      count > before.count
        ? Math.max(before.range.start, count - WINDOW_SIZE)
        : Math.min(before.range.start, count);
    range = { start, end: count };
  } else {
    range = clampRange(before.range, count);
  }
  // A request stays pending until a pane finds its message: the pane of the tree the search left
  // may see it before the new tree's pane is drawn.
  if (request !== null && !served.has(request)) pending.current = request;
  if (pending.current !== null && served.has(pending.current)) pending.current = null;
  if (pending.current !== null) {
    const index = ids.indexOf(pending.current.message);
    if (index >= 0) {
      served.add(pending.current);
      reveal.current = pending.current.message;
      pending.current = null;
      following.current = false;
      anchor.current = null;
      range = rangeAround(index, count);
    }
  }
  held.current = { conversation, count, first, range, follow };

  const moveTo = (next: MessageRange) => {
    const element = list.current;
    if (element === null || (next.start === range.start && next.end === range.end)) return;
    anchor.current = sight(element).top;
    following.current = following.current && next.end === count;
    held.current = { ...held.current, range: next };
    redraw((n) => n + 1);
  };

  /**
   * Moves the window when the view is near one of its ends. Only a list that is laid out (it has
   * a height) is looked at: a hidden pane, or a test's document, has nothing on screen.
   */
  const check = () => {
    const element = list.current;
    if (element === null || element.clientHeight === 0) return;
    const fromBottom = element.scrollHeight - element.scrollTop - element.clientHeight;
    following.current = fromBottom <= BOTTOM_PX && range.end === count;
    // Near the top, with fewer than a window's worth of older messages held: the page before
    // them is read now, so it is there by the time the window reaches them.
    if (element.scrollTop < EDGE_PX && range.start < WINDOW_SIZE && earlier.count > 0) {
      earlier.read(null);
    }
    if (element.scrollTop < EDGE_PX && range.start > 0) {
      const { keepLast } = sight(element);
      moveTo(olderRange(range, keepLast < 0 ? range.end - 1 : range.start + keepLast));
    } else if (fromBottom < EDGE_PX && range.end < count) {
      const { keepFirst } = sight(element);
      moveTo(newerRange(range, count, keepFirst < 0 ? range.start : range.start + keepFirst));
    }
  };

  // After every render: scroll to a message asked for, keep the anchored message in place, or
  // follow the end; then see whether the window should move (what is drawn may not fill the view).
  useLayoutEffect(() => {
    const element = list.current;
    if (element === null) return;
    const kept = anchor.current;
    anchor.current = null;
    const asked = reveal.current;
    reveal.current = null;
    // A message asked for that comes before those held may be among the earlier ones.
    const wanted = pending.current?.message;
    if (wanted !== undefined && first !== undefined && wanted < first && earlier.count > 0) {
      earlier.read(wanted);
    }
    if (asked !== null) {
      messageElement(element, asked)?.scrollIntoView?.({ block: "center" });
    } else if (following.current) {
      element.scrollTop = element.scrollHeight;
    } else if (kept !== null) {
      const moved = messageElement(element, kept.id);
      if (moved !== null) {
        const top = moved.getBoundingClientRect().top - element.getBoundingClientRect().top;
        element.scrollTop += top - kept.top;
      }
    }
    check();
  });

  return {
    range,
    onScroll: check,
    showOlder: () => {
      if (range.start < WINDOW_STEP && earlier.count > 0) earlier.read(null);
      const element = list.current;
      const keep = element === null ? -1 : sight(element).keepLast;
      moveTo(olderRange(range, keep < 0 ? range.end - 1 : range.start + keep));
    },
    showNewest: () => {
      following.current = true;
      anchor.current = null;
      held.current = { ...held.current, range: newestRange(count) };
      redraw((n) => n + 1);
    },
  };
}
