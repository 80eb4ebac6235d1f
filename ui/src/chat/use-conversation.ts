// The focused frame's conversation as the chat pane shows it: the frame and its stored messages,
// the reply streaming in, what the agent waits on, and how the last answer ended. Sending,
// answering an approval, Stop and Retry all go through `converse`, one small state machine:
// idle → streaming → idle, failed (with a retry) or stopped (with an answer-again).
//
// The frame is read with one `frameView` call, which returns only the messages after those the
// pane holds (see `FrameView` in bindings.ts for how views combine). A stored message is heard
// of twice — the reply's `saved` event and the tree's change seq — and both ask for a read
// through `ask`: reads never overlap, asks made while one runs are served by one more read, and
// an ask the held view already answers (a seq it was read at, a message it holds settled) is
// dropped.
//
// A view that starts over holds only the frame's newest messages (a page of them); older ones are
// read a page at a time, before the oldest held, with `earlierMessages` as the person scrolls up
// to them (or, to show a search hit, every one from a little before it). They are all closed, so
// they are only ever put in front of what is held, and the views that follow keep them.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";

import type { Answer, Backend } from "../backend";
import type {
  ApiError,
  Answer_Deserialize as RequestAnswer,
  ChatEvent,
  ChatOutcome,
  ChatView_Serialize as ChatView,
  EarlierMessages_Serialize as EarlierMessages,
  FrameDetail_Serialize as FrameDetail,
  FrameId,
  Message_Serialize as Message,
  Suggestion,
  SuggestionKind,
  ToolDetail,
  WaitingRequest,
} from "../bindings";

/** The frame's messages as the pane holds them, with what the last view said of them. */
export interface Held {
  frame: string;
  messages: Message[];
  /**
   * The call the agent waits on there for the person (from the store, so it is asked again
   * after a restart).
   */
  waiting: WaitingRequest | null;
  /** The id to read after next time: the last message that can no longer change. */
  settled: number | null;
  /** The event seq the view was read at. */
  seq: number;
  /** How many of the frame's messages come before `messages` (not read yet). */
  earlier: number;
}

export const NOTHING_HELD: Held = {
  frame: "",
  messages: [],
  waiting: null,
  settled: null,
  seq: -1,
  earlier: 0,
};

/** Why the pane wants the frame read again. */
type Need =
  /** The focused frame changed, or an answer ended: read whatever is held. */
  | { kind: "always" }
  /** The data directory changed up to `seq`. */
  | { kind: "seq"; seq: number }
  /** Message `message` was stored in `frame`. */
  | { kind: "message"; frame: string; message: number };

/** Whether `held`, the view of `frame`, already answers `need`. */
function answered(need: Need, held: Held, frame: string): boolean {
  if (held.frame !== frame) return false;
  switch (need.kind) {
    case "always":
      return false;
    case "seq":
      return need.seq <= held.seq;
    case "message":
      return need.frame === frame && held.settled !== null && need.message <= held.settled;
  }
}

/** What the pane holds after `view` of `frame`: the kept messages, then the view's. */
export function applyView(held: Held, frame: string, view: ChatView): Held {
  const keep = view.kept_through;
  const extending = keep !== null && held.frame === frame;
  const kept = extending ? held.messages.filter((m) => m.id <= keep) : [];
  return {
    frame,
    messages: [...kept, ...view.messages],
    waiting: view.waiting_request,
    settled: view.settled_through,
    seq: view.seq,
    earlier: extending ? held.earlier : view.earlier,
  };
}

/**
 * What the pane holds after `page`, the messages of `frame` read before message `before`: the
 * page in front of what is held, if what is held still starts at `before` (a view that started
 * over meanwhile holds other messages, and the page is dropped).
 */
export function applyEarlier(
  held: Held,
  frame: string,
  before: number,
  page: EarlierMessages,
): Held {
  if (held.frame !== frame || held.messages[0]?.id !== before || page.messages.length === 0) {
    return held;
  }
  return { ...held, messages: [...page.messages, ...held.messages], earlier: page.earlier };
}

/** A tool the reply on its way called, with its result once it ran. */
export interface StreamingTool {
  id: string;
  name: string;
  result?: { content: string; isError: boolean; detail: ToolDetail | null };
}

/** A reply on its way: the text since the last stored message, and the tools it ran. */
export interface Streaming {
  state: "streaming";
  /**
   * The frame the reply streams in: where it was sent, then where the conversation moved. The
   * pane shows the draft only there, not in a frame focused meanwhile.
   */
  frame: FrameId;
  draft: string;
  tools: StreamingTool[];
}

export type Reply =
  | { state: "idle" }
  | Streaming
  | { state: "failed"; error: ApiError; retry: () => void }
  // The person pressed Stop: not an error; what arrived is kept, marked interrupted.
  | { state: "stopped"; retry: () => void };

export interface Conversation {
  /**
   * The frame as `frameView` last read it: null until the first read, and the previous
   * frame's until the newly focused one's has been read (compare its id).
   */
  detail: FrameDetail | null;
  /** Why the frame or its messages could not be read, if they could not. */
  loadError: ApiError | null;
  /**
   * The stored messages held (the newest ones, and as many older ones as were read), without
   * the open reply while its live draft stands in for it.
   */
  messages: Message[];
  /** How many of the frame's messages come before `messages`, not read yet. */
  earlier: number;
  /**
   * Reads the page of messages before those held, or with `reach` (a message id) every one from
   * a little before that message, if it is one of the frame's; one read at a time, and each
   * `reach` is tried once per frame.
   */
  readEarlier: (reach: number | null) => void;
  reply: Reply;
  /** How the last answer ended, once it has. */
  outcome: ChatOutcome | null;
  /** The call the agent waits on for the person (a push, a pop, a workspace tool), if any. */
  waiting: WaitingRequest | null;
  notices: string[];
  /** Push or pop, as Flame suggests them after a reply; at most one of each kind. */
  suggestions: Suggestion[];
  send: (text: string) => Promise<void>;
  /** Answers the request the agent waits on in this frame: allow it (or its kind), or refuse it. */
  answerRequest: (answer: RequestAnswer) => Promise<void>;
  stop: () => void;
  /** Puts a failed reply out of sight. */
  dismissFailure: () => void;
  dismissSuggestion: (kind: SuggestionKind) => void;
}

/**
 * The conversation of `frame` in a tree at `seq`; every call to a model is sent with `model`,
 * read when the call is made.
 */
export function useConversation(
  backend: Backend,
  frame: string,
  seq: number,
  model: string | null,
): Conversation {
  const [detail, setDetail] = useState<FrameDetail | null>(null);
  // The messages with the frame they belong to, so a newly focused frame never shows the
  // previous frame's conversation while its own is read. The ref is what the reads extend; the
  // state is what is drawn.
  const [loaded, setLoaded] = useState<Held>(NOTHING_HELD);
  const held = useRef<Held>(NOTHING_HELD);
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  const [reply, setReply] = useState<Reply>({ state: "idle" });
  const [outcome, setOutcome] = useState<ChatOutcome | null>(null);
  const [notices, setNotices] = useState<string[]>([]);
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  // Set by Stop, so the answer's cancellation error reads as what the person asked for.
  const stopRequested = useRef(false);
  // Read when a call is made, so a retry uses the model picked since the failure.
  const chosenModel = useRef(model);
  chosenModel.current = model;
  // What the reads use: the frame and backend of the latest render.
  const target = useRef({ backend, frame });
  target.current = { backend, frame };
  // Asks not yet served by a read, and whether a read is running; refs, so an event handler
  // registered earlier sees the current values.
  const needs = useRef<Need[]>([]);
  const reading = useRef(false);
  const mounted = useRef(true);
  // Whether a page of earlier messages is being read, and the messages asked for with `reach`
  // (by frame and id), so that one which is not the frame's is not asked for again.
  const readingEarlier = useRef(false);
  const reached = useRef(new Set<string>());

  /** Reads the frame until every ask made before a read started is served, one read at a time. */
  const serve = async () => {
    reading.current = true;
    try {
      while (needs.current.length > 0 && mounted.current) {
        needs.current = [];
        const { backend, frame } = target.current;
        const mine = held.current.frame === frame ? held.current : NOTHING_HELD;
        const view = await backend.frameView(frame, mine.settled);
        // A frame focused meanwhile asked for its own read, which the loop makes next.
        if (!mounted.current || target.current.frame !== frame) continue;
        if (view.status === "error") {
          setLoadError(view.error);
        } else {
          setLoadError(null);
          setDetail(view.data.frame);
          // What is held now: a page of earlier messages may have been put in front meanwhile
          // (the held messages through `settled` are the same ones).
          const now = held.current.frame === frame ? held.current : NOTHING_HELD;
          held.current = applyView(now, frame, view.data);
          setLoaded(held.current);
        }
        // Asks made during the read that it already answers need no read of their own.
        needs.current = needs.current.filter(
          (n) => !answered(n, held.current, target.current.frame),
        );
      }
    } finally {
      // A read that threw (the IPC itself failed) leaves the next ask free to read again.
      reading.current = false;
    }
  };

  const readEarlier = (reach: number | null) => {
    const { backend, frame } = target.current;
    const before = held.current.frame === frame ? held.current.messages[0]?.id : undefined;
    if (readingEarlier.current || before === undefined || held.current.earlier === 0) return;
    if (reach !== null) {
      const key = `${frame} ${reach}`;
      if (reached.current.has(key)) return;
      reached.current.add(key);
    }
    readingEarlier.current = true;
    void backend
      .earlierMessages(frame, before, reach)
      .then((page) => {
        if (!mounted.current) return;
        if (page.status === "error") {
          setLoadError(page.error);
          return;
        }
        const next = applyEarlier(held.current, frame, before, page.data);
        if (next !== held.current) {
          held.current = next;
          setLoaded(next);
        }
      })
      .finally(() => {
        readingEarlier.current = false;
      });
  };

  /** Asks for the frame to be read again, unless what is held already answers `need`. */
  const ask = (need: Need) => {
    if (answered(need, held.current, target.current.frame)) return;
    needs.current.push(need);
    if (!reading.current) void serve();
  };

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  useEffect(() => ask({ kind: "always" }), [backend, frame]);
  useEffect(() => ask({ kind: "seq", seq }), [seq]);

  // A new frame in focus starts with no stale prompt.
  useEffect(() => {
    setNotices([]);
    setSuggestions([]);
  }, [frame]);

  const onEvent = (event: ChatEvent) => {
    switch (event.kind) {
      case "text":
        return setReply((r) =>
          r.state === "streaming" ? { ...r, frame: event.frame, draft: r.draft + event.text } : r,
        );
      case "tool_call":
        return setReply((r) =>
          r.state === "streaming"
            ? { ...r, tools: [...r.tools, { id: event.id, name: event.name }] }
            : r,
        );
      case "tool_result":
        return setReply((r) =>
          r.state === "streaming"
            ? {
                ...r,
                tools: r.tools.map((t) =>
                  t.id === event.id
                    ? {
                        ...t,
                        result: {
                          content: event.content,
                          isError: event.is_error,
                          detail: event.detail ?? null,
                        },
                      }
                    : t,
                ),
              }
            : r,
        );
      case "saved":
        // What streamed so far is now a stored message; the stored copy replaces the draft.
        setReply((r) => (r.state === "streaming" ? { ...r, draft: "", tools: [] } : r));
        return ask({ kind: "message", frame: event.frame, message: event.message });
      case "moved":
        return setReply((r) =>
          r.state === "streaming" ? { ...r, frame: event.to, draft: "", tools: [] } : r,
        );
      case "notice":
        return setNotices((n) => [...n, event.text]);
      case "suggestion":
        return setSuggestions((current) => [
          ...current.filter((s) => s.kind !== event.suggestion.kind),
          event.suggestion,
        ]);
    }
  };

  /**
   * Streams one answer (a message, or an approval) and shows how it ended. A failure offers a
   * retry: the same call if nothing was stored, else answering again where the conversation
   * stopped, so a stored message is never sent twice.
   */
  const converse = async (
    call: (listener: (e: ChatEvent) => void) => Promise<Answer<ChatOutcome>>,
  ) => {
    let stored = false;
    let at = frame;
    stopRequested.current = false;
    setOutcome(null);
    setReply({ state: "streaming", frame, draft: "", tools: [] });
    const answer = await call((event) => {
      if (event.kind === "saved") {
        stored = true;
        at = event.frame;
      } else if (event.kind === "moved") {
        at = event.to;
      }
      onEvent(event);
    });
    ask({ kind: "always" });
    if (answer.status === "ok") {
      setReply({ state: "idle" });
      setOutcome(answer.data);
    } else {
      const again = stored
        ? (listener: (e: ChatEvent) => void) =>
            backend.answerAgain(at, chosenModel.current, listener)
        : call;
      const retry = () => void converse(again);
      setReply(
        stopRequested.current
          ? { state: "stopped", retry }
          : { state: "failed", error: answer.error, retry },
      );
    }
  };

  const streaming = reply.state === "streaming";
  const messages = useMemo(() => {
    const stored = loaded.frame === frame ? loaded.messages : [];
    // The reply being streamed is already a stored message (open, marked interrupted until it
    // finishes, so a crash keeps it); while it streams, the live draft shows it instead.
    const last = stored[stored.length - 1];
    return streaming && last?.role === "assistant" && last.interrupted
      ? stored.slice(0, -1)
      : stored;
  }, [loaded, frame, streaming]);
  // The answer that just stopped says so at once; the stored conversation says so after a reload.
  const waiting: WaitingRequest | null =
    outcome?.stopped.kind === "awaiting_approval" && outcome.frame === frame
      ? outcome.stopped.request
      : reply.state === "idle" && loaded.frame === frame
        ? loaded.waiting
        : null;

  return {
    detail,
    loadError,
    messages,
    earlier: loaded.frame === frame ? loaded.earlier : 0,
    readEarlier,
    reply,
    outcome,
    waiting,
    notices,
    suggestions,
    send: (text) =>
      converse((listener) => backend.sendMessage(frame, text, chosenModel.current, listener)),
    answerRequest: (answer) =>
      converse((listener) => backend.answerRequest(frame, answer, chosenModel.current, listener)),
    stop: () => {
      stopRequested.current = true;
      void backend.cancelAnswer();
    },
    dismissFailure: () => setReply({ state: "idle" }),
    dismissSuggestion: (kind) =>
      setSuggestions((current) => current.filter((s) => s.kind !== kind)),
  };
}
