import { describe, expect, it } from "vitest";

import type {
  ChatView_Serialize as ChatView,
  FrameDetail_Serialize as FrameDetail,
  Message_Serialize as Message,
} from "../bindings";
import { storedMessage } from "../test-backend";
import { NOTHING_HELD, applyEarlier, applyView, type Held } from "./use-conversation";

const FRAME = "f0000000002";

function message(id: number): Message {
  return storedMessage(id, FRAME, "user", `message ${id}`);
}

const range = (first: number, last: number) =>
  Array.from({ length: last - first + 1 }, (_, k) => message(first + k));

/** A view of messages `messages`; the frame itself is not what these tests look at. */
function view(kept: number | null, messages: Message[], earlier: number): ChatView {
  return {
    frame: { id: FRAME } as FrameDetail,
    seq: 1,
    kept_through: kept,
    messages,
    settled_through: messages.at(-1)?.id ?? kept,
    waiting_request: null,
    earlier,
  };
}

const ids = (held: Held) => held.messages.map((m) => m.id);

describe("the messages the pane holds", () => {
  it("start at the newest page, take earlier pages in front, and keep them as views follow", () => {
    let held = applyView(NOTHING_HELD, FRAME, view(null, range(301, 500), 300));
    expect([ids(held)[0], held.earlier]).toEqual([301, 300]);

    held = applyEarlier(held, FRAME, 301, { messages: range(101, 300), earlier: 100 });
    expect(ids(held)).toEqual(range(101, 500).map((m) => m.id));
    expect(held.earlier).toBe(100);

    // A view after the last settled message keeps everything held, the earlier pages too.
    held = applyView(held, FRAME, view(500, range(501, 502), 0));
    expect(ids(held)).toEqual(range(101, 502).map((m) => m.id));
    expect(held.earlier).toBe(100);

    // A view that starts over holds its own page again.
    held = applyView(held, FRAME, view(null, range(303, 502), 302));
    expect([ids(held)[0], ids(held).length, held.earlier]).toEqual([303, 200, 302]);
  });

  it("drop an earlier page read before what is held now", () => {
    const held = applyView(NOTHING_HELD, FRAME, view(null, range(301, 500), 300));
    // The view started over meanwhile: the page was read before another first message.
    const page = { messages: range(1, 200), earlier: 0 };
    expect(applyEarlier(held, FRAME, 201, page)).toBe(held);
    // Or another frame is held now.
    expect(applyEarlier(held, "f0000000009", 301, page)).toBe(held);
  });
});
