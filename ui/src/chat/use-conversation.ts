// The focused frame's conversation as the chat pane shows it: the frame and its stored messages
// (read again whenever the tree's seq moves or a message is stored), the reply streaming in,
// what the agent waits on, and how the last answer ended. Sending, answering an approval, Stop
// and Retry all go through `converse`, one small state machine: idle → streaming → idle, failed
// (with a retry) or stopped (with an answer-again).

import { useEffect, useMemo, useRef, useState } from "preact/hooks";

import type { Answer, Backend } from "../backend";
import type {
  ApiError,
  ChatEvent,
  ChatOutcome,
  FrameEntry_Serialize as FrameEntry,
  Message_Serialize as Message,
  Suggestion,
  SuggestionKind,
  ToolCall,
} from "../bindings";

/** A reply on its way: the text since the last stored message, and the tools it ran. */
export interface Streaming {
  state: "streaming";
  draft: string;
  tools: { id: string; name: string; result?: string }[];
}

export type Reply =
  | { state: "idle" }
  | Streaming
  | { state: "failed"; error: ApiError; retry: () => void }
  // The person pressed Stop: not an error; what arrived is kept, marked interrupted.
  | { state: "stopped"; retry: () => void };

export interface Conversation {
  /**
   * The frame as `frameDetail` last read it: null until the first read, and the previous
   * frame's until the newly focused one's has been read (compare its id).
   */
  detail: FrameEntry | null;
  /** Why the frame or its messages could not be read, if they could not. */
  loadError: ApiError | null;
  /** The stored messages, without the open reply while its live draft stands in for it. */
  messages: Message[];
  reply: Reply;
  /** How the last answer ended, once it has. */
  outcome: ChatOutcome | null;
  /** The push or pop the agent waits on for the person, if any. */
  waiting: ToolCall | null;
  notices: string[];
  /** Push or pop, as Flame suggests them after a reply; at most one of each kind. */
  suggestions: Suggestion[];
  send: (text: string) => Promise<void>;
  /** Accepts or refuses the request the agent waits on in this frame. */
  answerRequest: (accept: boolean) => Promise<void>;
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
  const [detail, setDetail] = useState<FrameEntry | null>(null);
  // The messages with the frame they belong to, so a newly focused frame never shows the
  // previous frame's conversation while its own is read.
  // With them, the push or pop the agent waits on there for the person (from the store, so it
  // is asked again after a restart).
  const [loaded, setLoaded] = useState<{
    frame: string;
    messages: Message[];
    waiting: ToolCall | null;
  }>({ frame: "", messages: [], waiting: null });
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  const [reply, setReply] = useState<Reply>({ state: "idle" });
  const [outcome, setOutcome] = useState<ChatOutcome | null>(null);
  const [notices, setNotices] = useState<string[]>([]);
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  // Bumped when a message is stored mid-reply, so the conversation is read again without
  // waiting for the tree's change event.
  const [savedCount, setSavedCount] = useState(0);
  // Set by Stop, so the answer's cancellation error reads as what the person asked for.
  const stopRequested = useRef(false);
  // Read when a call is made, so a retry uses the model picked since the failure.
  const chosenModel = useRef(model);
  chosenModel.current = model;

  useEffect(() => {
    let live = true;
    void Promise.all([
      backend.frameDetail(frame),
      backend.frameMessages(frame),
      backend.waitingRequest(frame),
    ]).then(([entry, history, request]) => {
      if (!live) return;
      if (entry.status === "error") return setLoadError(entry.error);
      if (history.status === "error") return setLoadError(history.error);
      setLoadError(null);
      setDetail(entry.data);
      setLoaded({
        frame,
        messages: history.data,
        waiting: request.status === "ok" ? request.data : null,
      });
    });
    return () => {
      live = false;
    };
  }, [backend, frame, seq, savedCount]);

  // A new frame in focus starts with no stale prompt.
  useEffect(() => {
    setNotices([]);
    setSuggestions([]);
  }, [frame]);

  const onEvent = (event: ChatEvent) => {
    switch (event.kind) {
      case "text":
        return setReply((r) =>
          r.state === "streaming" ? { ...r, draft: r.draft + event.text } : r,
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
                  t.id === event.id ? { ...t, result: event.content } : t,
                ),
              }
            : r,
        );
      case "saved":
        // What streamed so far is now a stored message; the stored copy replaces the draft.
        setReply((r) => (r.state === "streaming" ? { ...r, draft: "", tools: [] } : r));
        return setSavedCount((n) => n + 1);
      case "moved":
        return setReply((r) => (r.state === "streaming" ? { ...r, draft: "", tools: [] } : r));
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
    setReply({ state: "streaming", draft: "", tools: [] });
    const answer = await call((event) => {
      if (event.kind === "saved") {
        stored = true;
        at = event.frame;
      } else if (event.kind === "moved") {
        at = event.to;
      }
      onEvent(event);
    });
    setSavedCount((n) => n + 1);
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
  const waiting: ToolCall | null =
    outcome?.stopped.kind === "awaiting_approval" && outcome.frame === frame
      ? outcome.stopped.call
      : reply.state === "idle" && loaded.frame === frame
        ? loaded.waiting
        : null;

  return {
    detail,
    loadError,
    messages,
    reply,
    outcome,
    waiting,
    notices,
    suggestions,
    send: (text) =>
      converse((listener) => backend.sendMessage(frame, text, chosenModel.current, listener)),
    answerRequest: (accept) =>
      converse((listener) => backend.answerRequest(frame, accept, chosenModel.current, listener)),
    stop: () => {
      stopRequested.current = true;
      void backend.cancelAnswer();
    },
    dismissFailure: () => setReply({ state: "idle" }),
    dismissSuggestion: (kind) =>
      setSuggestions((current) => current.filter((s) => s.kind !== kind)),
  };
}
