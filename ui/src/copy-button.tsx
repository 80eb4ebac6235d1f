// A button that copies a text to the clipboard and says, for a moment, whether it could: the
// code blocks' in messages and the gateway's lines to paste.

import { useEffect, useState } from "preact/hooks";

type CopyState = "idle" | "copied" | "failed";

/** How long "Copied" shows before the button reads "Copy" again. */
const COPIED_SHOWN_MS = 1500;

export function CopyButton({
  text,
  title,
  className,
  testId,
}: {
  text: string;
  title: string;
  className?: string;
  testId?: string;
}) {
  const [copy, setCopy] = useState<CopyState>("idle");

  useEffect(() => {
    if (copy === "idle") return;
    const timer = setTimeout(() => setCopy("idle"), COPIED_SHOWN_MS);
    return () => clearTimeout(timer);
  }, [copy]);

  const copyText = () => {
    // Through a promise, so a webview without the clipboard API also ends up at "Copy failed".
    void Promise.resolve()
      .then(() => navigator.clipboard.writeText(text))
      .then(
        () => setCopy("copied"),
        () => setCopy("failed"),
      );
  };

  return (
    <button type="button" class={className} title={title} data-testid={testId} onClick={copyText}>
      {copy === "copied" ? "Copied" : copy === "failed" ? "Copy failed" : "Copy"}
    </button>
  );
}
