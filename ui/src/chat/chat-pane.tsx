// The right pane: the focused frame's header, its conversation, the reply streaming in, the
// composer (with slash commands), approval prompts, the pop dialog and the context inspector.
// Every decision is the backend's: the pane sends what the person asked and shows the answer,
// or the refusal with the backend's message.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Answer, Backend } from "../backend";
import type {
  ApiError,
  ChatEvent,
  ChatOutcome,
  FrameEntry_Serialize as FrameEntry,
  FrameOutline_Serialize as FrameOutline,
  Message_Serialize as Message,
  Suggestion,
  SuggestionKind,
  ToolCall,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { ExportDialog } from "../export-dialog";
import { STATUS_STYLE } from "../status-style";
import { COMPLETION_LIST_ID, CompletionList, optionId, useCompletions } from "./completion-list";
import { ContextInspector } from "./context-inspector";
import { Markdown } from "./markdown";
import { MessageView, ToolCallCard } from "./messages";
import { ModelPicker, type ModelChoice } from "./model-picker";
import { PopDialog } from "./pop-dialog";
import { parseComposer, type SlashCommand } from "./slash";
import { ErrorLine } from "../error-line";

/** Runs a frame operation and reloads the tree; resolves to the refusal, if any. */
export type RunCommand = <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>;

/** A reply on its way: the text since the last stored message, and the tools it ran. */
interface Streaming {
  state: "streaming";
  draft: string;
  tools: { id: string; name: string; result?: string }[];
}

type Reply =
  | { state: "idle" }
  | Streaming
  | { state: "failed"; error: ApiError; retry: () => void }
  // The person pressed Stop: not an error; what arrived is kept, marked interrupted.
  | { state: "stopped"; retry: () => void };

/** The frames from the root down to `frame`, for the breadcrumb. */
export function pathToRoot(outline: TreeOutline, frame: string): FrameOutline[] {
  const byId = new Map(outline.frames.map((f) => [f.id, f]));
  const path: FrameOutline[] = [];
  for (
    let at = byId.get(frame);
    at !== undefined;
    at = at.parent ? byId.get(at.parent) : undefined
  ) {
    path.unshift(at);
    if (path.length > outline.frames.length) break;
  }
  return path;
}

export function ChatPane({
  backend,
  outline,
  frame,
  run,
  onFocus,
  models,
  onOpenSettings,
}: {
  backend: Backend;
  outline: TreeOutline;
  frame: FrameOutline;
  run: RunCommand;
  onFocus: (id: string) => void;
  /** The window's model choice; every call to a model is sent with the chosen one. */
  models: ModelChoice;
  /** Opens the settings dialog, which the app holds. */
  onOpenSettings: () => void;
}) {
  const [detail, setDetail] = useState<FrameEntry | null>(null);
  // The messages with the frame they belong to, so a newly focused frame never shows the
  // previous frame's conversation while its own is read.
  // With them, the push or pop the agent waits on there for the person (from the store, so it
  // is asked again after a restart).
  const [conversation, setConversation] = useState<{
    frame: string;
    messages: Message[];
    waiting: ToolCall | null;
  }>({ frame: "", messages: [], waiting: null });
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  const [reply, setReply] = useState<Reply>({ state: "idle" });
  const [outcome, setOutcome] = useState<ChatOutcome | null>(null);
  const [notices, setNotices] = useState<string[]>([]);
  // Push or pop, as Flame suggests them after a reply; at most one of each kind.
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  const [text, setText] = useState("");
  const [composerError, setComposerError] = useState<ApiError | null>(null);
  const [showStatus, setShowStatus] = useState(false);
  const [inspecting, setInspecting] = useState(false);
  const [popping, setPopping] = useState(false);
  const [exporting, setExporting] = useState(false);
  // Bumped when a message is stored mid-reply, so the conversation is read again without
  // waiting for the tree's change event.
  const [savedCount, setSavedCount] = useState(0);
  const list = useRef<HTMLDivElement>(null);
  // Set by Stop, so the answer's cancellation error reads as what the person asked for.
  const stopRequested = useRef(false);
  // Read when a call is made, so a retry uses the model picked since the failure.
  const chosenModel = useRef(models.chosen);
  chosenModel.current = models.chosen;
  const box = useRef<HTMLTextAreaElement>(null);
  const takeCommand = (command: SlashCommand) => {
    setText(`/${command.name} `);
    box.current?.focus();
  };
  const slash = useCompletions(text, takeCommand);

  useEffect(() => {
    let live = true;
    void Promise.all([
      backend.frameDetail(frame.id),
      backend.frameMessages(frame.id),
      backend.waitingRequest(frame.id),
    ]).then(([entry, history, request]) => {
      if (!live) return;
      if (entry.status === "error") return setLoadError(entry.error);
      if (history.status === "error") return setLoadError(history.error);
      setLoadError(null);
      setDetail(entry.data);
      setConversation({
        frame: frame.id,
        messages: history.data,
        waiting: request.status === "ok" ? request.data : null,
      });
    });
    return () => {
      live = false;
    };
  }, [backend, frame.id, outline.seq, savedCount]);

  // A new frame in focus starts with a clean slate: its own composer state and no stale prompt.
  useEffect(() => {
    setComposerError(null);
    setShowStatus(false);
    setNotices([]);
    setSuggestions([]);
  }, [frame.id]);

  useEffect(() => {
    const element = list.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, [conversation, reply]);

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

  const dismissSuggestion = (kind: SuggestionKind) =>
    setSuggestions((current) => current.filter((s) => s.kind !== kind));

  /** A push suggestion starts a `/push` in the composer; a pop one opens the pop dialog. */
  const acceptSuggestion = (kind: SuggestionKind) => {
    dismissSuggestion(kind);
    if (kind === "pop") setPopping(true);
    else setText("/push ");
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
    let at = frame.id;
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

  const send = (message: string) =>
    converse((listener) => backend.sendMessage(frame.id, message, chosenModel.current, listener));

  const answerApproval = (accept: boolean, waitingIn: string) =>
    converse((listener) => backend.answerRequest(waitingIn, accept, chosenModel.current, listener));

  const refusedOr = (failure: ApiError | null) => {
    setComposerError(failure);
    if (failure === null) setText("");
  };

  const submit = async () => {
    const action = parseComposer(text);
    setComposerError(null);
    switch (action.kind) {
      case "message":
        if (action.text === "") return;
        setText("");
        return send(action.text);
      case "invalid":
        return setComposerError({ code: "invalid", message: action.message });
      case "push":
        return refusedOr(await run(backend.pushFrame(frame.id, action.title, action.criteria)));
      case "plan":
        return refusedOr(
          await run(
            backend.planFrames(frame.id, null, [
              { title: action.title, success_criteria: action.criteria, children: [] },
            ]),
          ),
        );
      case "pop":
        setText("");
        return setPopping(true);
      case "status":
        setText("");
        return setShowStatus(true);
      case "start": {
        const target =
          action.frame ??
          outline.frames
            .filter((f) => f.parent === frame.id && f.status === "planned")
            .sort((a, b) => a.position - b.position)[0]?.id;
        if (target === undefined) {
          return setComposerError({
            code: "invalid",
            message: "This frame has no planned child to start; name one: /start FRAME-ID.",
          });
        }
        return refusedOr(await run(backend.startFrame(target)));
      }
      case "invalidate":
        return refusedOr(await run(backend.invalidateFrame(frame.id, action.reason)));
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (slash.onKeyDown(event)) return;
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void submit();
    }
  };

  const streaming = reply.state === "streaming";
  const stored = conversation.frame === frame.id ? conversation.messages : [];
  // The reply being streamed is already a stored message (open, marked interrupted until it
  // finishes, so a crash keeps it); while it streams, the live draft shows it instead.
  const last = stored[stored.length - 1];
  const messages =
    streaming && last?.role === "assistant" && last.interrupted ? stored.slice(0, -1) : stored;
  const writable = frame.status === "in_progress";
  // The answer that just stopped says so at once; the stored conversation says so after a reload.
  const waiting: ToolCall | null =
    outcome?.stopped.kind === "awaiting_approval" && outcome.frame === frame.id
      ? outcome.stopped.call
      : reply.state === "idle" && conversation.frame === frame.id
        ? conversation.waiting
        : null;
  const path = pathToRoot(outline, frame.id);

  return (
    <>
      <header
        class="pane-header focused-header"
        data-testid="focused-frame"
        data-frame-id={frame.id}
        data-status={frame.status}
      >
        <span class="focused-title">{frame.title}</span>
        <span class={`status-chip status-${frame.status}`}>{STATUS_STYLE[frame.status].label}</span>
        <span class="header-tools">
          {writable && (
            <button type="button" data-testid="pop-button" onClick={() => setPopping(true)}>
              Pop…
            </button>
          )}
          <button
            type="button"
            aria-pressed={inspecting}
            data-testid="inspector-toggle"
            onClick={() => setInspecting(!inspecting)}
          >
            Context
          </button>
          <button type="button" data-testid="export-button" onClick={() => setExporting(true)}>
            Export…
          </button>
        </span>
      </header>
      <div class="frame-summary">
        <div class="summary-line">
          <nav class="breadcrumb" aria-label="Path to the root" data-testid="chat-breadcrumb">
            {path.map((step, i) => (
              <span key={step.id}>
                {i > 0 && <span class="muted"> › </span>}
                {step.id === frame.id ? (
                  <span aria-current="true">{step.title}</span>
                ) : (
                  <button type="button" class="link-button" onClick={() => onFocus(step.id)}>
                    {step.title}
                  </button>
                )}
              </span>
            ))}
          </nav>
          <code class="muted frame-id" title="The frame's id, accepted by every command">
            {frame.id}
          </code>
        </div>
        {detail !== null && detail.id === frame.id && (
          <>
            <p class="criteria" data-testid="frame-criteria">
              <span class="muted">Done when: </span>
              {detail.success_criteria}
            </p>
            {detail.results !== null && (
              <div class="frame-results" data-testid="frame-results">
                <span class="muted">Results:</span>
                <Markdown text={detail.results} />
              </div>
            )}
            {detail.status_reason !== null && (
              <p class="frame-reason">
                <span class="muted">Reason: </span>
                {detail.status_reason}
              </p>
            )}
          </>
        )}
      </div>
      {inspecting && <ContextInspector backend={backend} frame={frame.id} seq={outline.seq} />}
      <div class="messages" ref={list} data-testid="messages" aria-live="polite">
        {loadError !== null && (
          <p class="error-message" role="alert">
            {loadError.message}
          </p>
        )}
        {messages.length === 0 && reply.state === "idle" && loadError === null && (
          <div class="empty-state">
            <p class="empty-title">No conversation yet</p>
            <p>{writable ? "Write below to start working on this frame." : ""}</p>
          </div>
        )}
        {messages.map((message) => (
          <MessageView key={message.id} message={message} />
        ))}
        {reply.state === "streaming" && (
          <article class="message message-assistant streaming" data-testid="streaming-reply">
            <header class="message-meta muted">Assistant · writing…</header>
            {reply.draft !== "" && <Markdown text={reply.draft} />}
            {reply.tools.map((tool) => (
              <ToolCallCard
                key={tool.id}
                call={{ id: tool.id, name: tool.name, arguments: "" }}
                result={tool.result}
              />
            ))}
          </article>
        )}
        {notices.map((notice, i) => (
          <p key={i} class="chat-notice muted" role="status">
            {notice}
          </p>
        ))}
        {suggestions.map((suggestion) => (
          <div
            key={suggestion.kind}
            class="suggestion"
            role="group"
            aria-label={`Suggestion: ${suggestion.kind}`}
            data-testid="suggestion"
            data-kind={suggestion.kind}
          >
            <p>{suggestion.reason}</p>
            <div class="dialog-buttons">
              <button type="button" onClick={() => dismissSuggestion(suggestion.kind)}>
                Dismiss
              </button>
              <button
                type="button"
                class="primary"
                onClick={() => acceptSuggestion(suggestion.kind)}
              >
                {suggestion.kind === "push" ? "Push a child…" : "Pop…"}
              </button>
            </div>
          </div>
        ))}
        {showStatus && detail !== null && (
          <div class="status-card" data-testid="status-card">
            <button
              type="button"
              aria-label="Close"
              class="close"
              onClick={() => setShowStatus(false)}
            >
              ×
            </button>
            <p>
              <strong>{detail.title}</strong> is {STATUS_STYLE[detail.status].label.toLowerCase()}:{" "}
              {detail.message_count} messages, {detail.tokens} tokens,{" "}
              {outline.frames.filter((f) => f.parent === detail.id).length} children.
            </p>
            <p class="muted">Log: {detail.log_path}</p>
          </div>
        )}
        {reply.state === "failed" && (
          <div
            class="chat-error"
            role="alert"
            data-testid="chat-error"
            data-code={reply.error.code}
          >
            <p>{reply.error.message}</p>
            <div class="chat-error-buttons">
              <button type="button" data-testid="retry-answer" onClick={reply.retry}>
                Retry
              </button>
              <button type="button" onClick={onOpenSettings}>
                Settings
              </button>
              <button type="button" onClick={() => setReply({ state: "idle" })}>
                Dismiss
              </button>
            </div>
          </div>
        )}
        {reply.state === "stopped" && (
          <div class="chat-notice muted" role="status" data-testid="reply-stopped">
            <span>Stopped. What arrived is kept, marked interrupted.</span>{" "}
            <button
              type="button"
              class="link-button"
              data-testid="retry-answer"
              onClick={reply.retry}
            >
              Answer again
            </button>
          </div>
        )}
        {outcome?.stopped.kind === "tool_round_limit" && (
          <p class="chat-notice muted" role="status">
            The agent stopped at the tool-round limit; send a message to let it go on.
          </p>
        )}
        {waiting !== null && (
          <div class="approval" role="group" aria-label="Approval" data-testid="approval">
            <p>
              The agent asks to run <strong>{waiting.name}</strong>:
            </p>
            <pre>{JSON.stringify(waiting.arguments, null, 2)}</pre>
            <div class="dialog-buttons">
              <button type="button" onClick={() => void answerApproval(false, frame.id)}>
                Refuse
              </button>
              <button
                type="button"
                class="primary"
                onClick={() => void answerApproval(true, frame.id)}
              >
                Accept
              </button>
            </div>
          </div>
        )}
      </div>
      {writable ? (
        <form
          class="composer"
          data-testid="composer"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <CompletionList list={slash} onPick={takeCommand} />
          <ErrorLine error={composerError} testId="composer-error" />
          <div class="composer-row">
            <textarea
              ref={box}
              name="message"
              rows={3}
              value={text}
              aria-label="Message"
              aria-autocomplete="list"
              aria-controls={slash.highlighted === null ? undefined : COMPLETION_LIST_ID}
              aria-activedescendant={
                slash.highlighted === null ? undefined : optionId(slash.highlighted)
              }
              placeholder="Message, or / for commands (Enter sends, Shift+Enter for a new line)"
              onInput={(e) => setText(e.currentTarget.value)}
              onKeyDown={onKeyDown}
            />
            <div class="composer-side">
              <ModelPicker choice={models} onOpenSettings={onOpenSettings} />
              {streaming ? (
                <button
                  type="button"
                  data-testid="stop-button"
                  onClick={() => {
                    stopRequested.current = true;
                    void backend.cancelAnswer();
                  }}
                >
                  Stop
                </button>
              ) : (
                <button type="submit" class="primary">
                  Send
                </button>
              )}
            </div>
          </div>
        </form>
      ) : (
        <ReadOnlyBar frame={frame} backend={backend} run={run} />
      )}
      {popping && (
        <PopDialog
          backend={backend}
          frame={frame.id}
          title={frame.title}
          model={models.chosen}
          run={run}
          onClose={() => setPopping(false)}
        />
      )}
      {exporting && (
        <ExportDialog
          backend={backend}
          frame={frame}
          treeTitle={outline.tree.title}
          onClose={() => setExporting(false)}
        />
      )}
    </>
  );
}

/** In place of the composer for a frame that takes no messages: the action that reopens it. */
function ReadOnlyBar({
  frame,
  backend,
  run,
}: {
  frame: FrameOutline;
  backend: Backend;
  run: RunCommand;
}) {
  const [error, setError] = useState<ApiError | null>(null);
  const action =
    frame.status === "planned"
      ? { label: "Start", call: () => backend.startFrame(frame.id) }
      : frame.status === "blocked"
        ? { label: "Resume", call: () => backend.resumeFrame(frame.id) }
        : frame.status === "failed"
          ? { label: "Retry as a new frame", call: () => backend.retryFrame(frame.id) }
          : null;
  return (
    <div class="read-only-bar" data-testid="read-only">
      <span class="muted">
        This frame is {STATUS_STYLE[frame.status].label.toLowerCase()}; its conversation is
        read-only.
      </span>
      {action !== null && (
        <button
          type="button"
          class="primary"
          data-testid="frame-action"
          onClick={() => void run(action.call()).then(setError)}
        >
          {action.label}
        </button>
      )}
      <ErrorLine error={error} />
    </div>
  );
}
