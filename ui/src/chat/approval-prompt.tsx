// The question the agent waits on in the chat pane: a push or pop it wants to make, a call of an
// MCP server's tool with its arguments, or a workspace tool call with what it would do (the diff
// of a change, the exact command with its folder, timeout and where it would run — in the
// sandbox, or outside it because it asks to leave, with its reason, or because there is no sandbox
// here — a read in words, or why it cannot run). The person allows it, allows every call of its
// kind for the rest of the tree (a workspace call; or, for a command asking for the network, the
// network for the tree's commands), or refuses it with an optional reason the model is given. The
// request comes from the store, so the prompt is the same after a restart.

import { useState } from "preact/hooks";

import type {
  Answer_Deserialize as RequestAnswer,
  PlacePreview,
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

/** Said beside a command that would run in the sandbox. */
export const IN_SANDBOX =
  "Runs in the sandbox: only the workspace (not .git) and a private /tmp can be written, Flame's data and your keyring are hidden, and there is no network.";

/** Said beside a command that would run in the sandbox of a tree allowed the network. */
export const IN_SANDBOX_WITH_NETWORK =
  "Runs in the sandbox with the network, which you allowed for this tree: only the workspace (not .git) and a private /tmp can be written, and Flame's data and your keyring are hidden.";

/** Said beside a command that would run outside the sandbox. */
export const OUTSIDE_SANDBOX =
  "It would run outside the sandbox, with your account's permissions in the workspace folder.";

/** Where a waiting command would run, in words. */
function PlaceView({ place }: { place: PlacePreview }) {
  switch (place.kind) {
    case "sandbox":
      return (
        <p class="approval-sandboxed" role="note" data-testid="command-place" data-place="sandbox">
          {place.network ? IN_SANDBOX_WITH_NETWORK : IN_SANDBOX}
        </p>
      );
    case "leave_sandbox":
      return (
        <p class="approval-warning" role="note" data-testid="command-place" data-place="leave">
          The agent asks {place.leave === "network" ? "for the network" : "to leave the sandbox"}: “
          <span data-testid="leave-reason">{place.reason}</span>”.{" "}
          {place.leave === "network"
            ? "It would run in the sandbox with the network on."
            : OUTSIDE_SANDBOX}
        </p>
      );
    case "no_sandbox":
      return (
        <p class="approval-warning" role="note" data-testid="command-place" data-place="none">
          Commands cannot run in a sandbox here ({place.why}). {OUTSIDE_SANDBOX}
        </p>
      );
  }
}

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
          <PlaceView place={preview.place} />
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
  const asksForNetwork =
    ask.kind === "workspace" &&
    ask.preview.kind === "command" &&
    ask.preview.place.kind === "leave_sandbox" &&
    ask.preview.place.leave === "network";
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
        {asksForNetwork && (
          <button
            type="button"
            data-testid="approval-allow-network"
            onClick={() => onAnswer({ kind: "allow_network" })}
          >
            Allow the network in this tree
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
