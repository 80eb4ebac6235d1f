//! A generated Flame export of any size, for benchmarks and scale tests: `frames` frames and
//! `messages` messages in the schema of [`crate::flame_json`], written as a stream so its size is
//! bounded by the disk, not by memory.
//!
//! The shape is a working session's: a chain of in-progress frames from the root down to the
//! focus ([`ScaleSpec::chain`] deep), planned frames under the focus, and every other frame
//! finished beneath the chain — mostly completed with results and artifacts, some failed (each
//! followed by a completed retry), a few invalidated — in subtrees of varied depth. Messages are
//! user turns, assistant replies (a model, usage, and a tool call in about two of five), tool
//! results and the odd note, of lengths from a line to several kilobytes.
//!
//! Everything comes from the seed: the same [`ScaleSpec`] writes the same bytes. Nothing reads a
//! clock or the environment.

use std::io::{self, Write};

use flame_model::{Role, Status, Timestamp, ToolCall, ToolResult, Usage};

use crate::flame_json::{self, ExportFrame, ExportMessage, ExportTree};

/// The most frames a generated export holds: ten times the largest tree the benchmarks use, so
/// a mistyped count fails at once rather than filling the disk.
pub const MAX_SCALE_FRAMES: usize = 1_000_000;
/// The most messages a generated export holds. With [`MAX_SCALE_MESSAGE_BYTES`] it bounds the
/// file: a message takes about 1.4 KB on average (its content and its JSON), at most
/// [`MAX_SCALE_MESSAGE_BYTES`] plus 2 KB, so the largest export allowed is at most about 70 GB
/// and typically under 3 GB (100k frames and 200k messages take 278 MB).
pub const MAX_SCALE_MESSAGES: usize = 2_000_000;
/// The longest message content generated.
pub const MAX_SCALE_MESSAGE_BYTES: usize = 32 * 1024;
/// The deepest the in-progress chain to the focus may be, well under `flame_model::MAX_DEPTH`
/// so finished subtrees fit beneath its frames.
pub const MAX_SCALE_CHAIN: usize = 128;
/// How far below its chain frame a finished subtree reaches.
const SUBTREE_DEPTH: usize = 24;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleSpec {
    /// Frames in all, the root included: 1 to [`MAX_SCALE_FRAMES`].
    pub frames: usize,
    /// Messages in all: 0 to [`MAX_SCALE_MESSAGES`].
    pub messages: usize,
    /// Every choice is drawn from this.
    pub seed: u64,
    /// In-progress frames from the root to the focus, both included: 1 to
    /// [`MAX_SCALE_CHAIN`], and at most `frames`.
    pub chain: usize,
    /// When the tree was created (milliseconds since the epoch); every other time follows it.
    pub start: Timestamp,
}

impl ScaleSpec {
    /// `frames` and `messages` with a 40-frame chain, starting 2026-01-01.
    pub fn new(frames: usize, messages: usize, seed: u64) -> ScaleSpec {
        ScaleSpec { frames, messages, seed, chain: 40.min(frames), start: 1_767_225_600_000 }
    }

    /// Whether the counts are within the stated limits.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_SCALE_FRAMES).contains(&self.frames) {
            return Err(format!("frames must be 1 to {MAX_SCALE_FRAMES}, not {}", self.frames));
        }
        if self.messages > MAX_SCALE_MESSAGES {
            return Err(format!(
                "messages must be at most {MAX_SCALE_MESSAGES}, not {}",
                self.messages
            ));
        }
        if !(1..=MAX_SCALE_CHAIN.min(self.frames)).contains(&self.chain) {
            return Err(format!(
                "the chain must be 1 to {} frames, not {}",
                MAX_SCALE_CHAIN.min(self.frames),
                self.chain
            ));
        }
        Ok(())
    }
}

/// What [`write_export`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleCounts {
    pub frames: u64,
    pub messages: u64,
    pub bytes: u64,
}

/// Writes the export `spec` describes to `out`, one frame at a time; `out` should be buffered.
/// Fails with `InvalidInput` when `spec` is outside the limits, before writing anything.
pub fn write_export(spec: &ScaleSpec, out: &mut dyn Write) -> io::Result<ScaleCounts> {
    spec.check().map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
    let mut rng = Rng::new(spec.seed);
    let skeleton = skeleton(spec, &mut rng);
    let counts = message_counts(spec, &skeleton, &mut rng);
    let mut out = Counted { inner: out, bytes: 0 };
    let tree = ExportTree {
        title: "Scale fixture: a long-running project".to_owned(),
        created_at: spec.start,
        focus: Some(frame_id(spec.chain - 1)),
    };
    write!(
        out,
        "{{\"format\":\"{}\",\"version\":{},\"tree\":",
        flame_json::FORMAT,
        flame_json::VERSION
    )?;
    serde_json::to_writer(&mut out, &tree)?;
    out.write_all(b",\"frames\":[\n")?;
    let mut written = 0u64;
    for (i, shape) in skeleton.iter().enumerate() {
        if i > 0 {
            out.write_all(b",\n")?;
        }
        let frame = frame(spec, i, shape, counts[i], &mut rng);
        written += frame.messages.len() as u64;
        serde_json::to_writer(&mut out, &frame)?;
    }
    out.write_all(b"\n]}\n")?;
    out.flush()?;
    Ok(ScaleCounts { frames: skeleton.len() as u64, messages: written, bytes: out.bytes })
}

/// A frame's place in the tree, decided before any frame is written.
#[derive(Debug, Clone, Copy)]
struct Shape {
    parent: Option<usize>,
    position: u32,
    depth: usize,
    status: Status,
    /// The failed sibling this frame retries.
    retry_of: Option<usize>,
}

/// Every frame's parent, position and status, parents first.
fn skeleton(spec: &ScaleSpec, rng: &mut Rng) -> Vec<Shape> {
    let mut shapes: Vec<Shape> = Vec::with_capacity(spec.frames);
    let mut children = vec![0u32; spec.frames];
    let mut add = |shapes: &mut Vec<Shape>, parent: Option<usize>, status, retry_of| {
        let (position, depth) = match parent {
            Some(p) => {
                children[p] += 1;
                (children[p] - 1, shapes[p].depth + 1)
            }
            None => (0, 0),
        };
        shapes.push(Shape { parent, position, depth, status, retry_of });
    };
    for i in 0..spec.chain {
        add(&mut shapes, i.checked_sub(1), Status::InProgress, None);
    }
    let focus = spec.chain - 1;
    // A few planned steps under the focus, as a plan not yet begun.
    let planned = (spec.frames - spec.chain).min(3);
    for _ in 0..planned {
        add(&mut shapes, Some(focus), Status::Planned, None);
    }
    // Finished frames: each hangs under the previous finished frame (a subtree growing deeper),
    // under a random earlier finished frame, or under a frame of the chain, within
    // SUBTREE_DEPTH of the chain's deepest frame.
    let first_finished = shapes.len();
    while shapes.len() < spec.frames {
        let i = shapes.len();
        let parent = loop {
            let roll = rng.below(100);
            let candidate = if i == first_finished || roll < 20 {
                rng.below(spec.chain as u64) as usize
            } else if roll < 60 {
                i - 1
            } else {
                first_finished + rng.below((i - first_finished) as u64) as usize
            };
            let shape = shapes[candidate];
            let open = !matches!(shape.status, Status::Planned | Status::Invalidated);
            if open && shape.depth < spec.chain + SUBTREE_DEPTH {
                break candidate;
            }
        };
        let roll = rng.below(100);
        if roll < 6 && i + 1 < spec.frames {
            add(&mut shapes, Some(parent), Status::Failed, None);
            add(&mut shapes, Some(parent), Status::Completed, Some(i));
        } else if roll < 9 {
            add(&mut shapes, Some(parent), Status::Invalidated, None);
        } else {
            add(&mut shapes, Some(parent), Status::Completed, None);
        }
    }
    shapes
}

/// How many messages each frame holds: about one in forty goes to the focus, the rest to
/// frames drawn at random; planned frames hold none.
fn message_counts(spec: &ScaleSpec, shapes: &[Shape], rng: &mut Rng) -> Vec<u32> {
    let mut counts = vec![0u32; shapes.len()];
    let focus = spec.chain - 1;
    for _ in 0..spec.messages {
        let mut frame = focus;
        if rng.below(40) != 0 {
            frame = rng.below(shapes.len() as u64) as usize;
            if shapes[frame].status == Status::Planned {
                frame = focus;
            }
        }
        counts[frame] += 1;
    }
    counts
}

const MINUTE: Timestamp = 60_000;

fn frame(spec: &ScaleSpec, i: usize, shape: &Shape, count: u32, rng: &mut Rng) -> ExportFrame {
    let created_at = spec.start + i as Timestamp * MINUTE;
    let started = shape.status != Status::Planned;
    let finished = !matches!(shape.status, Status::Planned | Status::InProgress);
    let title = title(rng);
    let mut frame = ExportFrame {
        id: frame_id(i),
        parent: shape.parent.map(frame_id),
        position: shape.position,
        success_criteria: format!("{} is done when {}.", title, words(rng, 8..38)),
        title,
        success_criteria_compacted: None,
        status: shape.status,
        status_reason: None,
        results: None,
        results_compacted: None,
        artifacts: Vec::new(),
        decisions: Vec::new(),
        retry_of: shape.retry_of.map(frame_id),
        created_at,
        started_at: started.then_some(created_at),
        ended_at: None,
        messages: Vec::with_capacity(count as usize),
        cost: None,
    };
    // Messages a second apart, the frame ending a second after its last.
    let mut at = created_at;
    let mut turn = Turn::User;
    let mut context = 3_000u64;
    let model = if rng.below(4) == 0 { "gpt-4o-2024-08-06" } else { "claude-sonnet-4-5-20250929" };
    for n in 0..count {
        at += 1_000;
        let message = message(rng, &mut turn, &mut context, model, n, at);
        frame.messages.push(message);
    }
    if finished {
        frame.ended_at = Some(at + 1_000);
    }
    match shape.status {
        Status::Completed => {
            let sections = 1 + rng.below(3) as usize;
            let mut results = String::new();
            for s in 0..sections {
                let heading = ["Summary", "Changes", "Findings", "Next"][s];
                results.push_str(&format!("## {heading}\n{}\n\n", sentences(rng, 1..5)));
            }
            frame.results = Some(results.trim_end().to_owned());
            for _ in 0..rng.below(4) {
                frame.artifacts.push(path(rng));
            }
            for _ in 0..rng.below(3) {
                frame.decisions.push(sentences(rng, 1..2));
            }
            if rng.below(10) == 0 {
                frame.results_compacted = Some(sentences(rng, 1..2));
            }
        }
        Status::Failed => frame.status_reason = Some(format!("failed: {}", sentences(rng, 1..2))),
        Status::Invalidated => {
            frame.status_reason = Some(format!("no longer needed: {}", sentences(rng, 1..2)))
        }
        _ => {}
    }
    frame
}

/// What the next message of a frame is.
#[derive(Debug, Clone, PartialEq)]
enum Turn {
    User,
    Assistant,
    /// Results owed to the calls of the last reply, in order.
    Results(Vec<(String, &'static str)>),
}

const TOOLS: [&str; 6] =
    ["read_file", "edit_file", "search", "run_command", "list_files", "write_file"];

fn message(
    rng: &mut Rng,
    turn: &mut Turn,
    context: &mut u64,
    model: &str,
    n: u32,
    at: Timestamp,
) -> ExportMessage {
    let mut message = ExportMessage {
        role: Role::User,
        content: String::new(),
        tool_calls: None,
        tool_result: None,
        model: None,
        usage: None,
        tokens: 0,
        created_at: at,
        interrupted: false,
    };
    match std::mem::replace(turn, Turn::User) {
        Turn::User if n > 0 && rng.below(50) == 0 => {
            message.role = Role::Note;
            message.content = format!("Note: {}", sentences(rng, 1..2));
            *turn = Turn::User;
        }
        Turn::User => {
            message.content = {
                let length = Length::draw(rng).min(Length::Medium);
                text(rng, length)
            };
            *turn = Turn::Assistant;
        }
        Turn::Assistant => {
            message.role = Role::Assistant;
            message.model = Some(model.to_owned());
            let length = Length::draw(rng);
            message.content = text(rng, length);
            if rng.below(5) < 2 {
                let calls: Vec<(String, &'static str)> = (0..1 + rng.below(2))
                    .map(|c| {
                        (
                            format!("call_{n}_{c}_{:08x}", rng.next() as u32),
                            TOOLS[rng.below(6) as usize],
                        )
                    })
                    .collect();
                message.tool_calls = Some(
                    calls
                        .iter()
                        .map(|(id, name)| ToolCall {
                            arguments: arguments(rng, name),
                            id: id.clone(),
                            name: (*name).to_owned(),
                        })
                        .collect(),
                );
                *turn = Turn::Results(calls);
            }
            message.interrupted = rng.below(500) == 0;
        }
        Turn::Results(mut owed) => {
            let (id, name) = owed.remove(0);
            message.role = Role::Tool;
            let failed = rng.below(15) == 0;
            message.content = if failed {
                format!("error: {}", sentences(rng, 1..2))
            } else {
                tool_output(rng, name)
            };
            message.tool_result = Some(ToolResult {
                detail: None,
                is_error: failed,
                name: Some(name.to_owned()),
                tool_call_id: id,
            });
            *turn = if owed.is_empty() { Turn::Assistant } else { Turn::Results(owed) };
        }
    }
    // About four bytes a token, as the counters give for English and code; never more than the
    // content's bytes, so the import keeps the count as stated.
    message.tokens = (message.content.len() as u64).div_ceil(4) + 4;
    if message.role == Role::Assistant {
        let input = *context;
        let cached = input * rng.below(90) / 100;
        message.usage = Some(Usage {
            cache_read_tokens: cached,
            cache_write_tokens: if rng.below(4) == 0 { message.tokens } else { 0 },
            input_tokens: input - cached,
            output_tokens: message.tokens,
            ..Usage::default()
        });
    }
    *context += message.tokens;
    message
}

fn arguments(rng: &mut Rng, tool: &str) -> serde_json::Value {
    match tool {
        "run_command" => serde_json::json!({ "command": format!("cargo test -p {}", word(rng)) }),
        "search" => serde_json::json!({ "pattern": word(rng), "path": "crates" }),
        "list_files" => serde_json::json!({ "path": format!("crates/{}", word(rng)) }),
        "edit_file" => serde_json::json!({
            "path": path(rng),
            "old": words(rng, 4..5),
            "new": words(rng, 5..6),
        }),
        _ => serde_json::json!({ "path": path(rng) }),
    }
}

fn tool_output(rng: &mut Rng, tool: &str) -> String {
    match tool {
        "read_file" | "run_command" => {
            let length = Length::draw(rng);
            code(rng, length)
        }
        "list_files" | "search" => {
            (0..1 + rng.below(30)).map(|_| path(rng)).collect::<Vec<_>>().join("\n")
        }
        _ => format!("wrote {} ({} bytes)", path(rng), rng.below(20_000)),
    }
}

/// How long a text is, by class: most are a line or a paragraph, some a page, a few long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Length {
    Line,
    Medium,
    Page,
    Long,
}

impl Length {
    fn draw(rng: &mut Rng) -> Length {
        match rng.below(1000) {
            0..550 => Length::Line,
            550..880 => Length::Medium,
            880..985 => Length::Page,
            _ => Length::Long,
        }
    }

    /// A length in bytes within the class.
    fn bytes(self, rng: &mut Rng) -> usize {
        let (low, high) = match self {
            Length::Line => (20, 200),
            Length::Medium => (200, 1_500),
            Length::Page => (1_500, 4_000),
            Length::Long => (4_000, MAX_SCALE_MESSAGE_BYTES / 2),
        };
        low + rng.below((high - low) as u64) as usize
    }
}

/// Prose of about `length`'s bytes, in sentences and sometimes paragraphs, a list or a fence.
fn text(rng: &mut Rng, length: Length) -> String {
    let target = length.bytes(rng);
    let mut out = String::with_capacity(target + 100);
    while out.len() < target {
        match rng.below(12) {
            0 if !out.is_empty() => out.push_str("\n\n"),
            1 if length >= Length::Medium => {
                out.push_str("\n\n```rust\n");
                out.push_str(&code(rng, Length::Line));
                out.push_str("\n```\n\n");
            }
            2 if length >= Length::Medium => {
                for _ in 0..2 + rng.below(3) {
                    out.push_str(&format!("\n- {}", words(rng, 3..11)));
                }
                out.push_str("\n\n");
            }
            _ => {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push(' ');
                }
                out.push_str(&sentences(rng, 1..2));
            }
        }
    }
    truncate(&mut out, MAX_SCALE_MESSAGE_BYTES);
    out
}

/// Lines of code-like text of about `length`'s bytes.
fn code(rng: &mut Rng, length: Length) -> String {
    let target = length.bytes(rng);
    let mut out = String::with_capacity(target + 80);
    let mut indent = 0usize;
    while out.len() < target {
        let line = match rng.below(6) {
            0 => {
                indent += 1;
                format!("fn {}_{}(&self) -> Result<(), Error> {{", word(rng), word(rng))
            }
            1 if indent > 0 => {
                indent -= 1;
                "}".to_owned()
            }
            2 => format!("// {}", words(rng, 4..12)),
            _ => format!("let {} = {}({});", word(rng), word(rng), rng.below(1000)),
        };
        out.push_str(&"    ".repeat(indent.min(6)));
        out.push_str(&line);
        out.push('\n');
    }
    truncate(&mut out, MAX_SCALE_MESSAGE_BYTES);
    out
}

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        // The generated text is ASCII, so every byte is a character boundary.
        text.truncate(max);
    }
}

const VERBS: [&str; 16] = [
    "Add", "Fix", "Refactor", "Measure", "Document", "Test", "Port", "Remove", "Split", "Rename",
    "Cache", "Profile", "Review", "Migrate", "Harden", "Explore",
];

const WORDS: [&str; 64] = [
    "frame",
    "tree",
    "store",
    "index",
    "query",
    "message",
    "token",
    "context",
    "budget",
    "import",
    "export",
    "log",
    "window",
    "graph",
    "layout",
    "canvas",
    "search",
    "result",
    "artifact",
    "decision",
    "status",
    "parent",
    "child",
    "focus",
    "path",
    "file",
    "trail",
    "checkpoint",
    "workspace",
    "model",
    "provider",
    "stream",
    "reply",
    "tool",
    "call",
    "schema",
    "migration",
    "transaction",
    "row",
    "column",
    "batch",
    "limit",
    "error",
    "test",
    "bench",
    "profile",
    "cache",
    "memory",
    "thread",
    "process",
    "settings",
    "key",
    "price",
    "cost",
    "usage",
    "event",
    "clock",
    "id",
    "title",
    "criteria",
    "section",
    "summary",
    "handler",
    "parser",
];

fn word(rng: &mut Rng) -> &'static str {
    WORDS[rng.below(WORDS.len() as u64) as usize]
}

/// Words of the vocabulary, as many as a number drawn from `count`.
fn words(rng: &mut Rng, count: std::ops::Range<usize>) -> String {
    let count = count.start + rng.below((count.end - count.start) as u64) as usize;
    (0..count).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
}

/// Sentences, as many as a number drawn from `count`.
fn sentences(rng: &mut Rng, count: std::ops::Range<usize>) -> String {
    let count = count.start + rng.below((count.end - count.start) as u64) as usize;
    (0..count)
        .map(|_| {
            let body = words(rng, 5..19);
            let mut s = String::with_capacity(body.len() + 1);
            let mut chars = body.chars();
            if let Some(first) = chars.next() {
                s.push(first.to_ascii_uppercase());
            }
            s.push_str(chars.as_str());
            s.push('.');
            s
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn title(rng: &mut Rng) -> String {
    let verb = VERBS[rng.below(VERBS.len() as u64) as usize];
    let object = word(rng);
    format!("{verb} the {object} {}", words(rng, 1..5))
}

fn path(rng: &mut Rng) -> String {
    format!("crates/{}/src/{}_{}.rs", word(rng), word(rng), word(rng))
}

/// The id of frame `i` in the export: a Flame frame id (`f` and ten Crockford base-32 digits).
fn frame_id(i: usize) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
    let mut id = String::with_capacity(11);
    id.push('f');
    for shift in (0..10).rev() {
        id.push(DIGITS[(i >> (shift * 5)) & 31] as char);
    }
    id
}

/// SplitMix64: small, fast and fixed forever, so a seed always gives the same export.
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (which is at least 1).
    fn below(&mut self, n: u64) -> u64 {
        // The multiply-shift's bias is far below anything a fixture could notice.
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// A writer that counts the bytes passing through it.
struct Counted<'a> {
    inner: &'a mut dyn Write,
    bytes: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use flame_model::IdSource;

    use super::*;
    use crate::flame_json::Export;

    fn generate(spec: &ScaleSpec) -> Vec<u8> {
        let mut out = Vec::new();
        let counts = write_export(spec, &mut out).unwrap();
        assert_eq!(counts.bytes, out.len() as u64);
        assert_eq!(counts.frames, spec.frames as u64);
        assert_eq!(counts.messages, spec.messages as u64);
        out
    }

    #[test]
    fn a_generated_export_reads_back_as_a_valid_tree_of_the_asked_size() {
        let spec = ScaleSpec::new(500, 1_200, 7);
        let bytes = generate(&spec);
        let export: Export = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(export.frames.len(), 500);
        let draft = flame_json::to_draft(&export).unwrap();
        assert!(draft.report.problems.is_empty(), "{:?}", draft.report.problems);
        assert_eq!(draft.messages.len(), 1_200);
        let tree = draft.materialise(&mut IdSource::seeded(1)).unwrap();
        // The focus ends the in-progress chain from the root.
        let focus = tree.frames.iter().find(|f| f.id == tree.tree.focus).unwrap();
        let mut depth = 0;
        let mut at = focus;
        while let Some(parent) = &at.parent {
            assert_eq!(at.status, Status::InProgress);
            at = tree.frames.iter().find(|f| &f.id == parent).unwrap();
            depth += 1;
        }
        assert_eq!(depth, spec.chain - 1);
        let count = |s: Status| tree.frames.iter().filter(|f| f.status == s).count();
        assert_eq!(count(Status::InProgress), spec.chain);
        assert_eq!(count(Status::Planned), 3);
        assert!(count(Status::Completed) > 400 && count(Status::Failed) > 0);
        assert!(count(Status::Invalidated) > 0);
        let roles = |r: Role| draft.messages.iter().filter(|m| m.message.role == r).count();
        assert!(roles(Role::User) > 0 && roles(Role::Tool) > 0 && roles(Role::Note) > 0);
        assert!(draft.messages.iter().any(|m| m.message.tool_calls.is_some()));
        assert!(
            draft.messages.iter().filter(|m| m.message.role == Role::Assistant).all(|m| m
                .message
                .usage
                .is_some()
                && m.message.model.is_some())
        );
    }

    #[test]
    fn the_same_seed_writes_the_same_bytes_and_another_seed_others() {
        let spec = ScaleSpec::new(200, 300, 3);
        assert_eq!(generate(&spec), generate(&spec));
        assert_ne!(generate(&spec), generate(&ScaleSpec { seed: 4, ..spec }));
    }

    #[test]
    fn the_smallest_exports_are_valid_and_counts_past_the_limits_are_refused() {
        for (frames, messages) in [(1, 0), (1, 5), (2, 0), (4, 10)] {
            let bytes = generate(&ScaleSpec::new(frames, messages, 1));
            let export: Export = serde_json::from_slice(&bytes).unwrap();
            let draft = flame_json::to_draft(&export).unwrap();
            draft.materialise(&mut IdSource::seeded(1)).unwrap();
        }
        for spec in [
            ScaleSpec::new(MAX_SCALE_FRAMES + 1, 0, 1),
            ScaleSpec::new(10, MAX_SCALE_MESSAGES + 1, 1),
            ScaleSpec::new(0, 0, 1),
            ScaleSpec { chain: MAX_SCALE_CHAIN + 1, ..ScaleSpec::new(1_000, 0, 1) },
        ] {
            let err = write_export(&spec, &mut Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        }
    }

    #[test]
    fn frame_ids_are_flame_ids_and_distinct() {
        assert_eq!(frame_id(0), "f0000000000");
        assert_eq!(frame_id(33), "f0000000011");
        assert!(flame_model::FrameId::parse(&frame_id(MAX_SCALE_FRAMES)).is_ok());
    }
}
