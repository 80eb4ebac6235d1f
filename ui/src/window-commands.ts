// How the window runs a command: a refusal is shown in the window's notice (or, for a command
// whose caller shows it in place, only returned), and either way the tree reloads.

import { useState } from "preact/hooks";

import type { Answer, Backend } from "./backend";
import type { ApiError } from "./bindings";
import type { DialogResult } from "./frame-dialog";
import { frameActions, type DispatchFrameAction, type RunCommand } from "./frame-actions";

export interface WindowCommands {
  /** The last refusal, shown above the graph until dismissed or a command succeeds. */
  notice: ApiError | null;
  setNotice: (notice: ApiError | null) => void;
  /** Runs a command; a refusal is shown in the notice. */
  run: RunCommand;
  /** Runs a command whose caller (a dialog, a menu) shows a refusal in place. */
  runInPlace: RunCommand;
  /** Frame actions whose refusal the notice shows (from the graph, the chat's breadcrumb). */
  dispatch: DispatchFrameAction;
  /** Frame actions whose caller (a frame dialog, the pop dialog) shows the refusal in place. */
  dispatchInPlace: DispatchFrameAction;
  /** Does what a frame dialog asks for. */
  submit: (result: DialogResult) => Promise<ApiError | null>;
}

export function useWindowCommands(backend: Backend, reload: () => Promise<void>): WindowCommands {
  const [notice, setNotice] = useState<ApiError | null>(null);

  const runShowing = async <T>(
    call: Promise<Answer<T>>,
    showFailure: boolean,
  ): Promise<ApiError | null> => {
    const answer = await call;
    void reload();
    if (answer.status === "error") {
      if (showFailure) setNotice(answer.error);
      return answer.error;
    }
    setNotice(null);
    return null;
  };
  const run: RunCommand = (call) => runShowing(call, true);
  const runInPlace: RunCommand = (call) => runShowing(call, false);
  const dispatch = frameActions(backend, run);
  const dispatchInPlace = frameActions(backend, runInPlace);

  const submit = (result: DialogResult): Promise<ApiError | null> => {
    switch (result.kind) {
      case "push":
      case "plan":
      case "delete":
        return dispatchInPlace(result);
      case "invalidate":
        return dispatchInPlace({
          kind: "invalidate",
          id: result.id,
          reason: result.reason === "" ? null : result.reason,
        });
      case "edit":
        return dispatchInPlace({
          kind: "edit",
          id: result.id,
          title: result.title,
          criteria: result.criteria === "" ? null : result.criteria,
        });
    }
  };

  return { notice, setNotice, run, runInPlace, dispatch, dispatchInPlace, submit };
}
