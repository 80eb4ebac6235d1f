// The composer: the message box with its slash-command completion, the model picker, and Send or
// Stop. Enter sends; a line starting with `/` is a command (see `slash.ts`), dispatched here:
// frame operations through the frame actions, the rest (a message, /pop, /status) to the pane.

import { useEffect, useRef, useState } from "preact/hooks";

import type { ApiError, FrameOutline_Serialize as FrameOutline } from "../bindings";
import { ErrorLine } from "../error-line";
import type { DispatchFrameAction } from "../frame-actions";
import { COMPLETION_LIST_ID, CompletionList, optionId, useCompletions } from "./completion-list";
import { ModelPicker, type ModelChoice } from "./model-picker";
import { parseComposer, type SlashCommand } from "./slash";

export function Composer({
  frame,
  text,
  onText,
  models,
  onOpenSettings,
  streaming,
  dispatch,
  onSend,
  onStop,
  onPop,
  onStatus,
  startTarget,
}: {
  frame: FrameOutline;
  /** What the box holds; the pane keeps it, so a suggestion can start a command in it. */
  text: string;
  onText: (text: string) => void;
  models: ModelChoice;
  onOpenSettings: () => void;
  /** While a reply streams, Stop stands in for Send. */
  streaming: boolean;
  dispatch: DispatchFrameAction;
  onSend: (message: string) => Promise<void>;
  onStop: () => void;
  onPop: () => void;
  onStatus: () => void;
  /** What `/start` with no frame named starts, as the backend says; null when nothing. */
  startTarget: string | null;
}) {
  const [error, setError] = useState<ApiError | null>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  const takeCommand = (command: SlashCommand) => {
    onText(`/${command.name} `);
    box.current?.focus();
  };
  const slash = useCompletions(text, takeCommand);

  // A new frame in focus starts with its own composer state.
  useEffect(() => setError(null), [frame.id]);

  const refusedOr = (failure: ApiError | null) => {
    setError(failure);
    if (failure === null) onText("");
  };

  const submit = async () => {
    const action = parseComposer(text);
    setError(null);
    switch (action.kind) {
      case "message":
        if (action.text === "") return;
        onText("");
        return onSend(action.text);
      case "invalid":
        return setError({ code: "invalid", message: action.message });
      case "push":
        return refusedOr(
          await dispatch({
            kind: "push",
            parent: frame.id,
            title: action.title,
            criteria: action.criteria,
          }),
        );
      case "plan":
        return refusedOr(
          await dispatch({
            kind: "plan",
            parent: frame.id,
            position: null,
            title: action.title,
            criteria: action.criteria,
          }),
        );
      case "pop":
        onText("");
        return onPop();
      case "status":
        onText("");
        return onStatus();
      case "start": {
        const target = action.frame ?? startTarget;
        if (target === null) {
          return setError({
            code: "invalid",
            message: "This frame has no planned child to start; name one: /start FRAME-ID.",
          });
        }
        return refusedOr(await dispatch({ kind: "start", id: target }));
      }
      case "invalidate":
        return refusedOr(
          await dispatch({ kind: "invalidate", id: frame.id, reason: action.reason }),
        );
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (slash.onKeyDown(event)) return;
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void submit();
    }
  };

  return (
    <form
      class="composer"
      data-testid="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <CompletionList list={slash} onPick={takeCommand} />
      <ErrorLine error={error} testId="composer-error" />
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
          onInput={(e) => onText(e.currentTarget.value)}
          onKeyDown={onKeyDown}
        />
        <div class="composer-side">
          <ModelPicker choice={models} onOpenSettings={onOpenSettings} />
          {streaming ? (
            <button type="button" data-testid="stop-button" onClick={onStop}>
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
  );
}
