// The question the agent waits on in the chat pane: a push or pop it wants to make, a call of an
// MCP server's tool with its arguments, or a workspace tool call with what it would do (the diff
// of a change, the exact command with its folder and timeout, a read in words, or why it cannot
// run). The person allows it, allows every call of its kind for the rest of the tree (a workspace
// call), or refuses it with an optional reason the model is given. The request comes from the
// store, so the prompt is the same after a restart.

import { useState } from "preact/hooks";

import type {
  Answer_Deserialize as RequestAnswer,
  Preview,
  ToolKind,
  WaitingRequest,
} from "../bindings";
import { CodeBlock } from "./code-block";

/** What "Allow all … in this tree" names, per kind of workspace tool. */
export const KIND_PLURAL: Record<ToolKind, string> = {
  reading: "reads",
  changing: "changes",
  running: "commands",
};

/** Said beside every command the person is asked to allow. */
export const NOT_SANDBOXED =
  "Commands are not sandboxed: they run with your account's permissions in the workspace folder.";

/** What a waiting workspace call would do. */
function PreviewView({ preview }: { preview: Preview }) {
  switch (preview.kind) {
    case "change":
      return (
        <>
          <p>
            {preview.created ? "Create" : "Edit"} <code>{preview.path}</code>:
          </p>
          <div class="approval-diff" data-testid="approval-diff">
            <CodeBlock text={preview.diff} language="diff" />
          </div>
        </>
      );
    case "command":
      return (
        <>
          <div class="approval-command" data-testid="approval-command">
            <CodeBlock text={preview.command} language="bash" />
          </div>
          <p class="muted">
            In <code>{preview.folder}</code>, stopped after {preview.timeout_seconds} s.
          </p>
          <p class="approval-warning" role="note" data-testid="not-sandboxed">
            {NOT_SANDBOXED}
          </p>
        </>
      );
    case "reading":
      return <p data-testid="approval-reading">{preview.summary}</p>;
    case "invalid":
      return (
        <>
          <p class="error-message" data-testid="approval-invalid">
            {preview.message}
          </p>
          <p class="muted">Allowing it sends the model this error; nothing runs.</p>
        </>
      );
  }
}

/** The prompt for `request`; `onAnswer` sends the person's answer. */
export function ApprovalPrompt({
  request,
  onAnswer,
}: {
  request: WaitingRequest;
  onAnswer: (answer: RequestAnswer) => void;
}) {
  const [reason, setReason] = useState("");
  const { call, ask } = request;
  const refuse = () =>
    onAnswer({ kind: "refuse", reason: reason.trim() === "" ? null : reason.trim() });
  // A change is allowed as shown: the backend applies it only to the file this diff was made
  // from, and asks again when the file changed since.
  const shown =
    ask.kind === "workspace" && ask.preview.kind === "change" ? { shown: ask.preview.base } : {};
  return (
    <div
      class="approval"
      role="group"
      aria-label="Approval"
      data-testid="approval"
      data-ask={ask.kind}
      data-tool-kind={ask.kind === "workspace" ? ask.tool_kind : undefined}
    >
      {ask.kind === "frame_change" ? (
        <>
          <p>
            The agent asks to run <strong>{call.name}</strong>:
          </p>
          <pre>{JSON.stringify(call.arguments, null, 2)}</pre>
        </>
      ) : ask.kind === "mcp" ? (
        <>
          <p>
            The agent asks to call <strong>{ask.tool}</strong> of the MCP server{" "}
            <strong>{ask.server}</strong> with:
          </p>
          <pre data-testid="approval-mcp-arguments">{JSON.stringify(call.arguments, null, 2)}</pre>
          <p class="muted">
            To let this server's calls run without asking, change it in Settings, MCP servers.
          </p>
        </>
      ) : (
        <>
          <p>
            The agent asks to run <strong>{call.name}</strong>.
          </p>
          <PreviewView preview={ask.preview} />
        </>
      )}
      <label class="approval-reason">
        Reason for refusing (optional, sent to the model)
        <input
          name="refusal_reason"
          data-testid="approval-reason"
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <div class="dialog-buttons">
        <button type="button" data-testid="approval-refuse" onClick={refuse}>
          Refuse
        </button>
        {ask.kind === "workspace" && (
          <button
            type="button"
            data-testid="approval-allow-kind"
            onClick={() => onAnswer({ kind: "accept_kind", ...shown })}
          >
            Allow all {KIND_PLURAL[ask.tool_kind]} in this tree
          </button>
        )}
        <button
          type="button"
          class="primary"
          data-testid="approval-allow"
          onClick={() => onAnswer({ kind: "accept", ...shown })}
        >
          {ask.kind === "workspace" ? "Allow" : "Accept"}
        </button>
      </div>
    </div>
  );
}
