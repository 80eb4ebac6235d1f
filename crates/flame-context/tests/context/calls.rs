//! A frame's calls one after another (`next_call`), as the facade and the replay make them:
//! each request starts with the one before it unless the opening was made again or a batch of
//! masking sent part of it again, and those happen only by the rules of `opening.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use flame_context::request::{Prompt, prompt};
use flame_context::{
    Budget, CacheEconomics, CachePolicy, CallRules, ContextDoc, ContextInput, FrameContext,
    NextCall, next_call,
};
use flame_model::{
    CacheLifetime, ChatMessage, Frame, FrameId, InstructionFile, InstructionScope, Message,
    MessageId, OpeningReason, Role, SectionKind, Status, ToolCall, ToolResult,
};
use flame_tokens::Encoding;
use serde_json::json;

use crate::{log_paths, marked};

const ROOT: &str = "f000000r00t";
const FOCUS: &str = "f00000000c0";
const SIBLING: &str = "f00000000s0";
const PLANNED: &str = "f00000000p0";
const MINUTE: i64 = 60_000;

fn id(name: &str) -> FrameId {
    FrameId::parse(name).unwrap()
}

/// A frame's conversation as the facade keeps it: the frames around it, its stored messages
/// (notes included once stored) and its stored context, and the clock.
struct Frame0 {
    frames: Vec<Frame>,
    messages: Vec<Arc<Message>>,
    stored: Option<FrameContext>,
    now: i64,
    budget: u64,
    policy: CachePolicy,
    keep: Option<usize>,
    next_id: i64,
    /// The project instructions the caller would read now, if it looks for them.
    instructions: Option<Vec<InstructionFile>>,
}

impl Frame0 {
    fn new(policy: CachePolicy) -> Frame0 {
        Frame0 {
            frames: vec![
                marked(ROOT, None, 0, Status::InProgress),
                marked(SIBLING, Some(ROOT), 0, Status::InProgress),
                marked(FOCUS, Some(ROOT), 1, Status::InProgress),
            ],
            messages: Vec::new(),
            stored: None,
            now: 1_000,
            budget: 1_000_000,
            policy,
            keep: Some(1),
            next_id: 1,
            instructions: None,
        }
    }

    fn push(&mut self, role: Role, content: &str, tokens: u64) -> usize {
        let message = Message {
            id: MessageId(self.next_id),
            frame: id(FOCUS),
            role,
            content: content.to_owned(),
            tool_calls: None,
            tool_result: None,
            tokens,
            model: None,
            usage: None,
            created_at: self.now,
            interrupted: false,
        };
        self.next_id += 1;
        self.messages.push(Arc::new(message));
        self.messages.len() - 1
    }

    /// A reply calling a tool, and the tool's result of `tokens` tokens.
    fn tool_turn(&mut self, n: usize, tokens: u64) {
        let call = self.push(Role::Assistant, "", 20);
        let call_id = format!("call_{n}");
        Arc::get_mut(&mut self.messages[call]).unwrap().tool_calls = Some(vec![ToolCall {
            arguments: json!({"path": format!("src/{n}.rs")}),
            id: call_id.clone(),
            name: "read_file".into(),
        }]);
        let result =
            self.push(Role::Tool, &format!("contents of src/{n}.rs\n{}", "x".repeat(40)), tokens);
        Arc::get_mut(&mut self.messages[result]).unwrap().tool_result = Some(ToolResult {
            detail: None,
            is_error: false,
            name: Some("read_file".into()),
            tool_call_id: call_id,
        });
    }

    /// The next call, its update stored as the facade stores it.
    fn call(&mut self) -> (NextCall, Prompt) {
        let logs = log_paths(&self.frames);
        let trails = HashMap::new();
        let input = ContextInput {
            focus: &id(FOCUS),
            frames: &self.frames,
            messages: &self.messages,
            encoding: Encoding::O200kBase,
            budget: Budget::of(self.budget),
            log_paths: &logs,
            linear_message_tokens: 0,
            workspace: None,
            trails: &trails,
            path_trails: &trails,
            keep_tool_results: self.keep,
            allowance: None,
            instructions: self.instructions.as_deref(),
            read_back: flame_context::ReadBack::FrameLog,
        };
        let rules = CallRules { now: self.now, policy: self.policy };
        let next = next_call(&input, self.stored.as_ref(), &rules, None).unwrap();
        if let Some(update) = &next.update {
            let mut context = update.context.clone();
            if let Some(note) = &update.note {
                let at =
                    self.push(Role::Note, note, flame_tokens::count(Encoding::O200kBase, note));
                context.notes.push(self.messages[at].id);
            }
            self.stored = Some(context);
        }
        let prompt = prompt(&next.doc, Encoding::O200kBase, self.policy.conversation);
        // The model answers: the call is made now.
        self.now += 1_000;
        (next, prompt)
    }
}

fn starts_with(after: &[ChatMessage], before: &[ChatMessage]) -> bool {
    after.len() >= before.len() && after[..before.len()] == *before
}

fn report(next: &NextCall) -> &flame_context::OpeningReport {
    &next.doc.report.opening
}

#[test]
fn each_request_starts_with_the_one_before_while_frames_change_around_it() {
    let mut f = Frame0::new(CachePolicy::anthropic(None));
    f.push(Role::User, "survey the code", 10);
    let (first, mut before) = f.call();
    assert!(report(&first).made_now);
    assert_eq!(report(&first).reason, OpeningReason::Entered);
    for n in 0..12 {
        f.tool_turn(n, 300);
        match n {
            // A sibling finishes elsewhere, a frame is planned, the sibling's results change.
            3 => {
                let sibling = f.frames.iter_mut().find(|x| x.id == id(SIBLING)).unwrap();
                *sibling = marked(SIBLING, Some(ROOT), 0, Status::Completed);
            }
            5 => f.frames.push(marked(PLANNED, Some(ROOT), 2, Status::Planned)),
            8 => f.frames.retain(|x| x.id != id(PLANNED)),
            _ => {}
        }
        let (next, now) = f.call();
        let told = report(&next).noted_frames;
        assert_eq!(told > 0, matches!(n, 3 | 5 | 8), "call {n}: {told} frames told of");
        if report(&next).newly_masked == 0 {
            assert!(starts_with(&now.messages, &before.messages), "call {n}");
        }
        assert!(!report(&next).made_now, "call {n}: no rule made the opening again");
        assert_eq!(now.messages[0], before.messages[0], "the opening is kept");
        before = now;
    }
    let notes: Vec<&Arc<Message>> = f.messages.iter().filter(|m| m.role == Role::Note).collect();
    assert_eq!(notes.len(), 3);
    assert!(notes[0].content.contains(&format!("<frame id=\"{SIBLING}\" status=\"completed\">")));
    assert!(notes[1].content.contains(&format!("<frame id=\"{PLANNED}\" status=\"planned\">")));
    assert!(notes[2].content.contains(&format!("<frame id=\"{PLANNED}\" removed=\"true\">")));
}

#[test]
fn the_opening_is_made_again_when_asked_when_cold_and_when_over_the_budget() {
    let mut f = Frame0::new(CachePolicy::anthropic(None));
    f.push(Role::User, "start", 10);
    f.call();
    f.tool_turn(0, 300);
    f.stored.as_mut().unwrap().rebuild_asked = true;
    let (asked, _) = f.call();
    assert_eq!((report(&asked).made_now, report(&asked).reason), (true, OpeningReason::Asked));
    assert_eq!(report(&asked).generation, 2);
    assert!(!f.stored.as_ref().unwrap().rebuild_asked);

    // Four minutes later the conversation is still cached; six minutes later it is not.
    f.tool_turn(1, 300);
    f.now += 4 * MINUTE;
    assert!(!report(&f.call().0).made_now);
    f.tool_turn(2, 300);
    f.now += 6 * MINUTE;
    let (cold, _) = f.call();
    assert_eq!((report(&cold).made_now, report(&cold).reason), (true, OpeningReason::Cold));

    // Past the budget even with every older result masked, the opening gives way: what the
    // cold opening sent, with seven more turns, in what it alone took.
    for n in 3..10 {
        f.tool_turn(n, 300);
    }
    f.budget = cold.doc.report.total_tokens;
    let (budget, _) = f.call();
    assert_eq!((report(&budget).made_now, report(&budget).reason), (true, OpeningReason::Budget));
    assert!(budget.doc.report.fits);
    assert!(budget.doc.report.omitted_messages > 0 || budget.doc.report.masked_results > 0);
}

#[test]
fn a_local_server_masks_only_for_the_budget_and_a_provider_in_batches_it_can_afford() {
    let local = CachePolicy::local();
    let mut f = Frame0::new(local);
    f.push(Role::User, "start", 10);
    f.call();
    for n in 0..30 {
        f.tool_turn(n, 1_500);
        let (next, _) = f.call();
        assert_eq!(report(&next).newly_masked, 0, "reading a local cache is free: no batch");
    }

    let mut f = Frame0::new(CachePolicy {
        conversation: CacheLifetime::Short,
        economics: CacheEconomics::ANTHROPIC,
    });
    f.push(Role::User, "start", 10);
    f.call();
    let (mut batches, mut requests, mut rewritten) = (0, 0, 0u64);
    for n in 0..40 {
        f.tool_turn(n, 1_500);
        let (next, _) = f.call();
        requests += 1;
        if report(&next).newly_masked > 0 {
            batches += 1;
        }
        rewritten = f.stored.as_ref().unwrap().rewritten_per_mille;
        assert!(rewritten <= requests * flame_context::MAX_REWRITTEN_PER_MILLE, "call {n}");
    }
    assert!(batches >= 2, "{batches} batches in forty calls");
    assert!(batches < 20, "masking comes in batches, not at every call: {batches}");
    assert!(rewritten > 0);
    // Every result but the newest is masked by the end or waits for the next batch.
    let last = f.call().0;
    assert!(last.doc.report.masked_results >= 20, "{}", last.doc.report.masked_results);
}

#[test]
fn a_request_carries_its_marks_where_the_cache_needs_them() {
    let mut f = Frame0::new(CachePolicy::anthropic(None));
    f.push(Role::User, "start", 10);
    let (_, first) = f.call();
    // A frame without a child keeps everything for its conversation's lifetime.
    assert_eq!(first.system_lifetime, CacheLifetime::Short);
    let marks: Vec<(usize, CacheLifetime)> =
        first.marks.iter().map(|m| (m.message, m.lifetime)).collect();
    assert_eq!(marks, [(0, CacheLifetime::Short), (1, CacheLifetime::Short)]);
    f.tool_turn(0, 300);
    let (_, second) = f.call();
    // The opening, the end of the previous request (the person's message), and the newest.
    let marks: Vec<(usize, CacheLifetime)> =
        second.marks.iter().map(|m| (m.message, m.lifetime)).collect();
    assert_eq!(
        marks,
        [(0, CacheLifetime::Short), (1, CacheLifetime::Short), (3, CacheLifetime::Short)]
    );
    assert!(
        matches!(&second.messages[0], ChatMessage::User(text) if text.contains("<stack-context"))
    );
    assert_eq!(second.messages.len(), second.tokens.len());
    let doc: &ContextDoc = &f.call().0.doc;
    assert!(doc.system.starts_with(flame_context::PREAMBLE), "the system prompt is the preamble");
    assert!(!doc.system.contains("<stack-context id="));
    // Once the frame has a child, its shared start is kept for an hour: the stack says it is
    // wanted again after the child's work. An invalidated child says nothing of the kind.
    f.frames.push(marked(PLANNED, Some(FOCUS), 0, Status::Invalidated));
    assert_eq!(f.call().1.system_lifetime, CacheLifetime::Short);
    f.frames.pop();
    f.frames.push(marked(PLANNED, Some(FOCUS), 0, Status::Planned));
    let (_, parent) = f.call();
    assert_eq!(parent.system_lifetime, CacheLifetime::Long);
    assert!(parent.marks.iter().all(|m| m.lifetime == CacheLifetime::Short), "{parent:?}");
}

/// The system prompt starts with the shared preamble, the same bytes for every tree offered the
/// same tools, and the request's system mark ends it: the tree's workspace folder comes after.
#[test]
fn the_system_mark_ends_the_start_every_tree_shares() {
    let frames = Frame0::new(CachePolicy::anthropic(None)).frames;
    let logs = log_paths(&frames);
    let trails = HashMap::new();
    let request_in = |workspace: Option<&str>| {
        let input = ContextInput {
            focus: &id(FOCUS),
            frames: &frames,
            messages: &[],
            encoding: Encoding::O200kBase,
            budget: Budget::of(1_000_000),
            log_paths: &logs,
            linear_message_tokens: 0,
            workspace,
            trails: &trails,
            path_trails: &trails,
            keep_tool_results: None,
            allowance: None,
            instructions: None,
            read_back: flame_context::ReadBack::FrameLog,
        };
        let doc = flame_context::assemble(&input).unwrap();
        prompt(&doc, Encoding::O200kBase, CacheLifetime::Short)
    };
    let folders = ["/home/ada/one", "/srv/another tree"];
    let prompts = folders.map(|folder| request_in(Some(folder)));
    let shared = |p: &Prompt| p.system[..p.system_shared].to_owned();
    for (prompt, folder) in prompts.iter().zip(folders) {
        assert!(prompt.system[prompt.system_shared..].contains(folder), "{prompt:?}");
        assert!(!shared(prompt).contains(folder));
        assert!(prompt.system_shared_tokens < prompt.system_tokens);
    }
    assert_eq!(shared(&prompts[0]), shared(&prompts[1]));
    assert_eq!(shared(&prompts[0]), flame_context::shared_preamble(true));
    assert_ne!(prompts[0].system, prompts[1].system);
    // Without a workspace the whole system prompt is shared.
    let none = request_in(None);
    assert_eq!(none.system_shared, none.system.len());
    assert_eq!(none.system_shared_tokens, none.system_tokens);
    assert_eq!(none.system, flame_context::shared_preamble(false));
}

fn instruction_file(path: &str, text: &str) -> InstructionFile {
    InstructionFile {
        path: path.to_owned(),
        scope: InstructionScope::Workspace,
        text: text.to_owned(),
        size: text.len() as u64,
        problem: None,
    }
}

#[test]
fn project_instructions_open_the_opening_and_change_only_with_a_new_one() {
    let mut f = Frame0::new(CachePolicy::anthropic(None));
    f.instructions = Some(vec![
        instruction_file("AGENTS.md", "ROOT-RULES: run make test."),
        instruction_file("src/AGENTS.md", "SRC-RULES: no unsafe."),
    ]);
    f.push(Role::User, "start", 10);
    let (first, mut before) = f.call();
    let ChatMessage::User(opening) = &before.messages[0] else { panic!("the opening") };
    assert!(opening.starts_with("<project-instructions>\n"), "{opening}");
    let (root, src, doc) = (
        opening.find("ROOT-RULES").unwrap(),
        opening.find("SRC-RULES").unwrap(),
        opening.find("<stack-context").unwrap(),
    );
    assert!(root < src && src < doc, "the root's, then the nearer folder's, then the document");
    let sent = report(&first).instructions.as_ref().expect("the opening looked for them");
    assert_eq!(
        sent.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["AGENTS.md", "src/AGENTS.md"]
    );
    let section = first.doc.report.sections.iter().find(|s| s.kind == SectionKind::Instructions);
    let section = section.expect("the instructions are a section of the context");
    assert_eq!(section.label, "AGENTS.md, src/AGENTS.md");
    assert!(section.tokens > 10);
    assert_eq!(first.doc.report.sections[1].kind, SectionKind::Instructions, "after the preamble");

    // A file changes, and another is found: the kept opening still sends what it was made with.
    f.instructions = Some(vec![instruction_file("AGENTS.md", "ROOT-RULES-2: run cargo test.")]);
    for n in 0..3 {
        f.tool_turn(n, 300);
        let (next, now) = f.call();
        assert!(!report(&next).made_now);
        assert_eq!(now.messages[0], before.messages[0], "the opening is kept byte for byte");
        assert_eq!(report(&next).instructions, report(&first).instructions);
        before = now;
    }
    // Its next opening reads them again.
    f.tool_turn(3, 300);
    f.stored.as_mut().unwrap().rebuild_asked = true;
    let (again, now) = f.call();
    assert!(report(&again).made_now);
    let ChatMessage::User(opening) = &now.messages[0] else { panic!("the opening") };
    assert!(opening.contains("ROOT-RULES-2") && !opening.contains("SRC-RULES"), "{opening}");
    assert_eq!(report(&again).instructions.as_ref().unwrap().len(), 1);

    // Turned off: an opening made then says it did not look, and sends none.
    f.instructions = None;
    f.tool_turn(4, 300);
    f.stored.as_mut().unwrap().rebuild_asked = true;
    let (off, now) = f.call();
    let ChatMessage::User(opening) = &now.messages[0] else { panic!("the opening") };
    assert!(opening.trim_start().starts_with("<stack-context"), "{opening}");
    assert_eq!(report(&off).instructions, None);
    assert!(off.doc.report.sections.iter().all(|s| s.kind != SectionKind::Instructions));
}

#[test]
fn project_instructions_count_against_the_budget_and_never_give_way() {
    let text = "Follow the house rules. ".repeat(200);
    let mut with = Frame0::new(CachePolicy::local());
    with.instructions = Some(vec![instruction_file("AGENTS.md", &text)]);
    let mut without = Frame0::new(CachePolicy::local());
    for f in [&mut with, &mut without] {
        f.push(Role::User, "start", 10);
    }
    let (a, _) = with.call();
    let (b, _) = without.call();
    let instructions = a.doc.report.sections[1].tokens;
    assert!(instructions > 1_000);
    assert_eq!(a.doc.report.total_tokens, b.doc.report.total_tokens + instructions);
    assert_eq!(a.doc.report.opening.tokens, b.doc.report.opening.tokens + instructions);
    assert_eq!(a.doc.report.linear_tokens, b.doc.report.linear_tokens + instructions);

    // A budget too small for the rest: the sibling gives way, the instructions stay whole.
    let mut tight = Frame0::new(CachePolicy::local());
    tight.instructions = Some(vec![instruction_file("AGENTS.md", &text)]);
    tight.budget = a.doc.report.total_tokens - 5;
    tight.push(Role::User, "start", 10);
    let (fitted, _) = tight.call();
    assert!(fitted.doc.report.fits);
    assert!(fitted.doc.xml.contains(&text));
    assert!(
        fitted.doc.report.sections.iter().any(|s| s.state != flame_context::SectionState::Full)
    );
}
