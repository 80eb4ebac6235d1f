// Fenced code in a message, highlighted, with a button that copies it.
//
// Highlighting is lowlight (highlight.js's grammars producing a syntax tree, not HTML). The tree
// is turned into Preact elements here, and only two things survive that: text, which Preact puts
// into text nodes, and `span` elements whose class names start with `hljs-`. Any other element or
// attribute is dropped (its text kept), so code from an untrusted message can colour itself but
// never make markup, whatever the grammar does with it.

import { createLowlight } from "lowlight";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import makefile from "highlight.js/lib/languages/makefile";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import type { ComponentChildren } from "preact";
import { useMemo } from "preact/hooks";

import { CopyButton } from "../copy-button";

// A common set rather than all of highlight.js's grammars, which would multiply the bundle. The
// grammars' aliases come with them: `rs`, `ts`, `py`, `sh`, `html`, `toml`, `yml` and so on.
const highlighter = createLowlight({
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  makefile,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
});

/**
 * The languages a fence without a language may be guessed as. CSS, Markdown, INI and the like
 * are left out: their grammars match almost any short text and would win most guesses.
 */
const GUESSABLE = [
  "bash",
  "c",
  "cpp",
  "csharp",
  "go",
  "java",
  "javascript",
  "json",
  "python",
  "rust",
  "sql",
  "typescript",
  "xml",
  "yaml",
];

/**
 * How sure highlight.js must be of a guess. Its relevance grows with the keywords and forms it
 * recognises; below this, short snippets and prose get confidently wrong languages, and plain
 * text is the better answer.
 */
const GUESS_RELEVANCE = 5;

/** Guessing runs every guessable grammar over the text, so only blocks up to this are guessed. */
const GUESS_MAX_CHARS = 10_000;

/** Past this, a block is shown plain: highlighting would make the pane stutter while it streams. */
const HIGHLIGHT_MAX_CHARS = 100_000;

type SyntaxTree = ReturnType<typeof highlighter.highlight>;
type SyntaxNode = SyntaxTree["children"][number];

/** Code as highlighted nodes, and the language they were read as (null when shown plain). */
export interface Highlighted {
  language: string | null;
  nodes: SyntaxNode[];
}

/**
 * Highlights `text` as the fence's language. A language Flame has no grammar for is shown plain
 * (the author said what it is, so no other grammar is tried); no language at all is guessed.
 */
export function highlightCode(text: string, fenceLanguage: string): Highlighted {
  const plain: Highlighted = { language: null, nodes: [{ type: "text", value: text }] };
  if (text.length > HIGHLIGHT_MAX_CHARS) return plain;
  const name = fenceLanguage.toLowerCase();
  if (name !== "") {
    if (!highlighter.registered(name)) return plain;
    const tree = highlighter.highlight(name, text);
    return { language: tree.data?.language ?? name, nodes: tree.children };
  }
  if (text.length > GUESS_MAX_CHARS) return plain;
  const guess = highlighter.highlightAuto(text, { subset: GUESSABLE });
  const language = guess.data?.language;
  if (language === undefined || (guess.data?.relevance ?? 0) < GUESS_RELEVANCE) return plain;
  return { language, nodes: guess.children };
}

const TOKEN_CLASS = /^hljs-[a-z0-9_-]+$/;

/** The `hljs-` class names of a syntax-tree element; any other name is dropped. */
function tokenClasses(className: unknown): string {
  const names = Array.isArray(className)
    ? className
    : typeof className === "string"
      ? className.split(" ")
      : [];
  return names
    .filter((name): name is string => typeof name === "string" && TOKEN_CLASS.test(name))
    .join(" ");
}

function renderNode(node: SyntaxNode, key: number): ComponentChildren {
  switch (node.type) {
    case "text":
      return node.value;
    case "element": {
      const children = node.children.map(renderNode);
      const classes = tokenClasses(node.properties["className"]);
      // Only token spans are kept; anything else a grammar might make gives way to its text.
      if (node.tagName !== "span" || classes === "") return children;
      return (
        <span key={key} class={classes}>
          {children}
        </span>
      );
    }
    default:
      return null;
  }
}

/** A fenced code block: highlighted, labelled with its language, with a Copy button. */
export function CodeBlock({ text, language }: { text: string; language: string }) {
  // A streaming reply re-renders on every delta; only a block whose text changed is highlighted again.
  const highlighted = useMemo(() => highlightCode(text, language), [text, language]);

  const label = highlighted.language ?? language;
  return (
    <div class="md-code-block">
      <div class="md-code-head">
        <span class="md-code-language">{label}</span>
        <CopyButton text={text} title="Copy the code" className="md-code-copy" />
      </div>
      <pre
        class="md-code"
        data-language={language || undefined}
        data-highlighted={highlighted.language ?? undefined}
      >
        <code class={highlighted.language === null ? undefined : "hljs"}>
          {highlighted.nodes.map(renderNode)}
        </code>
      </pre>
    </div>
  );
}
