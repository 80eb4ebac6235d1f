// The right pane: the focused frame's header, its conversation, the reply streaming in, the
// composer (with slash commands), approval prompts, the pop dialog and the context inspector.
// Every decision is the backend's: the pane sends what the person asked and shows the answer,
// or the refusal with the backend's message. The conversation's state is `use-conversation.ts`;
// every frame action goes out through `frame-actions.ts`.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type {
  FrameOutline_Serialize as FrameOutline,
  SuggestionKind,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { budgetOf } from "../budget-text";
import { costOf } from "../cost-text";
import { frameActions, type RunCommand } from "../frame-actions";
import { STATUS_STYLE } from "../status-style";
import { ApprovalPrompt } from "./approval-prompt";
import { ChangesView } from "./changes-view";
import { Composer } from "./composer";
import { ContextInspector } from "./context-inspector";
import { FrameBudgetLine } from "./frame-budget";
import { useGatewaySavings } from "./frame-cost";
import { FrameHeader } from "./frame-header";
import { useMessageWindow, type MessageRequest } from "./message-window";
import { callNames, MessageView, StreamingReply } from "./messages";
import type { ModelChoice } from "./model-picker";
import { ReadOnlyBar } from "./read-only-bar";
import { useConversation } from "./use-conversation";

/** A request to show or hide one of the pane's panels; `seq` tells a new one from the last. */
export interface PanelRequest {
  panel: "inspector" | "changes" | "budget";
  seq: number;
}

export function ChatPane({
  backend,
  outline,
  frame,
  run,
  onFocus,
  models,
  onOpenSettings,
  onOpenDialog,
  panelRequest = null,
  messageRequest = null,
}: {
  backend: Backend;
  outline: TreeOutline;
  frame: FrameOutline;
  /** Runs a frame action's command; the pane shows a refusal in place. */
  run: RunCommand;
  onFocus: (id: string) => void;
  /** The window's model choice; every call to a model is sent with the chosen one. */
  models: ModelChoice;
  /** Opens the settings dialog, which the app holds. */
  onOpenSettings: () => void;
  /** Opens the pop or the export dialog for the focused frame, which the app holds (as it does
   * for any frame of the graph). */
  onOpenDialog: (kind: "pop" | "export") => void;
  /** The command palette's latest request to show or hide a panel, as its Context and Changes
   * buttons do; each is applied once, when its `seq` is new. */
  panelRequest?: PanelRequest | null;
  /** The latest request to show a message (a search hit), served once its frame is focused. */
  messageRequest?: MessageRequest | null;
}) {
  const conversation = useConversation(backend, frame.id, outline.seq, models.chosen);
  const { detail, loadError, messages, reply, outcome, waiting } = conversation;
  const dispatch = frameActions(backend, run);
  const gateway = useGatewaySavings(backend, frame.id, costOf(outline, frame.id));
  const [text, setText] = useState("");
  const [showStatus, setShowStatus] = useState(false);
  const [inspecting, setInspecting] = useState(false);
  // The Changes panel stands in for the conversation while open, and follows the focus.
  const [showingChanges, setShowingChanges] = useState(false);
  const list = useRef<HTMLDivElement>(null);
  // Each message the person sends (or approval they answer) brings the conversation's end back
  // into view.
  const [sent, setSent] = useState(0);

  // A request made before this pane was drawn (for another tree's pane) is not for it.
  const panelSeen = useRef(panelRequest?.seq ?? 0);
  // How many times the palette asked for the budget form, for the line to open it.
  const [budgetAsked, setBudgetAsked] = useState(0);
  useEffect(() => {
    if (panelRequest === null || panelRequest.seq <= panelSeen.current) return;
    panelSeen.current = panelRequest.seq;
    if (panelRequest.panel === "inspector") setInspecting((open) => !open);
    else if (panelRequest.panel === "budget") setBudgetAsked((n) => n + 1);
    else setShowingChanges((open) => !open);
  }, [panelRequest]);

  // A new frame in focus starts with a clean slate: no status card from the previous one.
  useEffect(() => setShowStatus(false), [frame.id]);

  // A result that does not name its tool is named by its call, wherever that is among them.
  const names = useMemo(() => callNames(messages), [messages]);
  // Only a window of the messages is drawn (`message-window.ts`); it follows the end while the
  // view is there, as the reply streams in.
  const ids = useMemo(() => messages.map((m) => m.id), [messages]);
  const shown = useMessageWindow(list, frame.id, ids, sent, messageRequest, {
    count: conversation.earlier,
    read: conversation.readEarlier,
  });
  const { start, end } = shown.range;
  // Messages before those drawn: those held but not drawn, and those not read yet.
  const above = start + conversation.earlier;

  /** A push suggestion starts a `/push` in the composer; a pop one opens the pop dialog. */
  const acceptSuggestion = (kind: SuggestionKind) => {
    conversation.dismissSuggestion(kind);
    if (kind === "pop") onOpenDialog("pop");
    else setText("/push ");
  };

  // What may be done with the frame is the backend's answer, read with the frame; until this
  // frame's has been read, neither the composer nor the read-only bar is shown.
  const actions = detail !== null && detail.id === frame.id ? detail.actions : null;
  const writable = actions?.chat === true;

  return (
    <>
      <FrameHeader
        outline={outline}
        frame={frame}
        detail={detail}
        canPop={actions?.pop === true}
        inspecting={inspecting}
        showingChanges={showingChanges}
        onPop={() => onOpenDialog("pop")}
        onToggleInspector={() => setInspecting(!inspecting)}
        onToggleChanges={() => setShowingChanges(!showingChanges)}
        onExport={() => onOpenDialog("export")}
        onFocus={onFocus}
        gateway={gateway}
      />
      <FrameBudgetLine
        key={frame.id}
        asked={budgetAsked}
        backend={backend}
        frame={frame.id}
        view={budgetOf(outline.budgets ?? [], frame.id)}
      />
      {inspecting && (
        <ContextInspector
          backend={backend}
          frame={frame.id}
          seq={outline.seq}
          cost={costOf(outline, frame.id)}
        />
      )}
      {showingChanges && (
        <ChangesView
          backend={backend}
          frame={frame.id}
          seq={outline.seq}
          run={run}
          onClose={() => setShowingChanges(false)}
        />
      )}
      <div
        class="messages"
        ref={list}
        data-testid="messages"
        aria-live="polite"
        hidden={showingChanges}
        onScroll={shown.onScroll}
      >
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
        {above > 0 && (
          <p class="message-window-edge muted" data-testid="earlier-messages">
            <button type="button" class="link-button" onClick={shown.showOlder}>
              {above === 1 ? "1 earlier message" : `${above} earlier messages`}
            </button>
          </p>
        )}
        {messages.slice(start, end).map((message) => (
          <MessageView
            key={message.id}
            message={message}
            callName={names.get(message.tool_result?.tool_call_id ?? "")}
          />
        ))}
        {end < messages.length && (
          <p class="message-window-edge muted" data-testid="newer-messages">
            <button type="button" class="link-button" onClick={shown.showNewest}>
              {messages.length - end === 1
                ? "1 newer message: show the newest"
                : `${messages.length - end} newer messages: show the newest`}
            </button>
          </p>
        )}
        {reply.state === "streaming" && reply.frame === frame.id && (
          <StreamingReply reply={reply} />
        )}
        {conversation.notices.map((notice, i) => (
          <p key={i} class="chat-notice muted" role="status">
            {notice}
          </p>
        ))}
        {conversation.suggestions.map((suggestion) => (
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
              <button type="button" onClick={() => conversation.dismissSuggestion(suggestion.kind)}>
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
              <button type="button" onClick={conversation.dismissFailure}>
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
        {(outcome?.stopped.kind === "turn_budget" || outcome?.stopped.kind === "budget_spent") && (
          <p class="chat-notice muted" role="status" data-testid="budget-stopped">
            {outcome.stopped.reason}
          </p>
        )}
        {waiting !== null && (
          <ApprovalPrompt
            key={waiting.call.id}
            request={waiting}
            onAnswer={(answer) => {
              setSent((n) => n + 1);
              void conversation.answerRequest(answer);
            }}
          />
        )}
      </div>
      {actions === null ? null : actions.chat ? (
        <Composer
          frame={frame}
          text={text}
          onText={setText}
          models={models}
          onOpenSettings={onOpenSettings}
          streaming={reply.state === "streaming"}
          dispatch={dispatch}
          onSend={(message) => {
            setSent((n) => n + 1);
            return conversation.send(message);
          }}
          onStop={conversation.stop}
          onPop={() => onOpenDialog("pop")}
          onStatus={() => setShowStatus(true)}
          startTarget={actions.start_target}
        />
      ) : (
        <ReadOnlyBar
          backend={backend}
          frame={frame}
          seq={outline.seq}
          actions={actions}
          dispatch={dispatch}
        />
      )}
    </>
  );
}
