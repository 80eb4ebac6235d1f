//! Project instructions through the facade: read when a call makes an opening, from the files
//! the frame and its ancestors worked in and the person's own file, kept with the opening until
//! the next one, and not read at all when the person turned them off.

use flame_api::{Budget, CachePolicy, DEFAULT_BUDGET, Env, Flame, FlameConfig};
use flame_model::{
    Actor, FileTrail, InstructionScope, NewMessage, OpeningReason, Role, ToolResult,
};

use crate::home;

const A: Actor = Actor::Person;

/// A Flame whose person keeps their own instructions in `config/AGENTS.md`, on a tree whose
/// workspace has `AGENTS.md` at its root and in `src/`.
struct Setup {
    flame: Flame,
    _data: tempfile::TempDir,
    workspace: tempfile::TempDir,
    config: tempfile::TempDir,
}

impl Setup {
    fn new(seed: u64) -> Setup {
        let (data, workspace, config) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        std::fs::write(config.path().join("AGENTS.md"), "PERSONAL: answer briefly.\n").unwrap();
        std::fs::write(workspace.path().join("AGENTS.md"), "ROOT: run make test.\n").unwrap();
        std::fs::create_dir(workspace.path().join("src")).unwrap();
        std::fs::write(workspace.path().join("src/AGENTS.md"), "SRC: no unsafe code.\n").unwrap();
        std::fs::write(workspace.path().join("src/lib.rs"), "fn main() {}\n").unwrap();
        let config_with = FlameConfig {
            personal_instructions: Some(config.path().join("AGENTS.md")),
            ..FlameConfig::default()
        };
        let flame =
            Flame::open_with(home(data.path()), config_with, Env::fixed(1_795_307_601_000, seed))
                .unwrap();
        Setup { flame, _data: data, workspace, config }
    }

    fn write(&self, relative: &str, text: &str) {
        std::fs::write(self.workspace.path().join(relative), text).unwrap();
    }
}

/// A `read_file` result whose trail names `path`.
fn read(flame: &Flame, frame: &flame_model::FrameId, path: &str) {
    let message = NewMessage {
        tool_result: Some(ToolResult {
            detail: None,
            is_error: false,
            name: Some("read_file".into()),
            tool_call_id: format!("read-{path}"),
        }),
        ..NewMessage::text(Role::Tool, "the file's text")
    };
    let trail = FileTrail::new([path.to_owned()], []);
    flame.add_tool_result(A, frame, &message, &trail).unwrap();
}

fn policy() -> CachePolicy {
    CachePolicy::anthropic(None)
}

#[test]
fn a_child_starts_with_the_instructions_above_its_parents_files_until_its_next_opening() {
    let s = Setup::new(90);
    let tree = s.flame.create_tree(A, "Root", "Ship it", Some(s.workspace.path())).unwrap();
    s.flame.append(A, &tree.root, Role::User, "look at the code").unwrap();
    let first = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
    let sent: Vec<String> = first
        .report
        .opening
        .instructions
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| f.path.clone())
        .collect();
    let personal = s.config.path().join("AGENTS.md").display().to_string();
    assert_eq!(sent, [personal.clone(), "AGENTS.md".into()], "no file worked in yet: the root's");

    // The parent reads a file in src/ and pushes a child: the child's opening carries the
    // person's, the root's and src/'s, in that order, before the document.
    read(&s.flame, &tree.root, "src/lib.rs");
    let child = s.flame.push(A, None, "Check lib", "lib.rs is fine").unwrap().id;
    s.flame.append(A, &child, Role::User, "check it").unwrap();
    let call = s.flame.prepare_call(&child, DEFAULT_BUDGET, policy()).unwrap();
    let at =
        |needle: &str| call.xml.find(needle).unwrap_or_else(|| panic!("{needle}: {}", call.xml));
    assert!(
        at("PERSONAL:") < at("ROOT:")
            && at("ROOT:") < at("SRC:")
            && at("SRC:") < at("<stack-context")
    );
    let report = call.report.opening.instructions.clone().unwrap();
    assert_eq!(
        report.iter().map(|f| (f.path.as_str(), f.scope)).collect::<Vec<_>>(),
        [
            (personal.as_str(), InstructionScope::Personal),
            ("AGENTS.md", InstructionScope::Workspace),
            ("src/AGENTS.md", InstructionScope::Workspace)
        ]
    );
    let made_at = call.report.opening.made_at;
    let stored = s.flame.frame_context(&child).unwrap().unwrap();
    assert_eq!(stored.instructions.as_ref(), Some(&report), "kept with the opening");

    // A file changes: the frame's calls and the inspector still show what the opening read,
    // and when.
    s.write("src/AGENTS.md", "SRC-2: no unsafe code, ever.\n");
    let kept = s.flame.prepare_call(&child, DEFAULT_BUDGET, policy()).unwrap();
    assert_eq!(kept.xml, call.xml, "the opening is repeated byte for byte");
    let preview = s.flame.context(Some(&child), None).unwrap();
    assert!(!preview.report.opening.made_now);
    assert_eq!(preview.report.opening.instructions, Some(report));
    assert_eq!(preview.report.opening.made_at, made_at);

    // Its next opening reads the file again.
    s.flame.rebuild_context(A, &child).unwrap();
    let again = s.flame.prepare_call(&child, DEFAULT_BUDGET, policy()).unwrap();
    assert_eq!(again.report.opening.reason, OpeningReason::Asked);
    assert!(again.xml.contains("SRC-2:") && !again.xml.contains("SRC: no"), "{}", again.xml);
}

#[test]
fn an_opening_the_budget_makes_reads_the_instructions_as_they_are_then() {
    let s = Setup::new(91);
    let tree = s.flame.create_tree(A, "Root", "Ship it", Some(s.workspace.path())).unwrap();
    s.flame.append(A, &tree.root, Role::User, "look at the code").unwrap();
    let first = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
    assert!(first.xml.contains("ROOT: run make test."));
    s.write("AGENTS.md", "ROOT-2: run cargo test.\n");
    for n in 0..6 {
        s.flame
            .append(A, &tree.root, Role::User, &format!("message {n} {}", "words ".repeat(400)))
            .unwrap();
    }
    // No rule makes an opening, so nothing is read before the call; the budget makes one.
    let budget = Budget::of(first.report.total_tokens + 1_200);
    let call = s.flame.prepare_call(&tree.root, budget, policy()).unwrap();
    assert_eq!(call.report.opening.reason, OpeningReason::Budget);
    assert!(call.xml.contains("ROOT-2: run cargo test."), "{}", call.xml);
    let stored = s.flame.frame_context(&tree.root).unwrap().unwrap();
    assert_eq!(stored.opening, call.xml);
}

#[test]
fn turned_off_no_instructions_are_read_and_the_report_says_none_were_looked_for() {
    let s = Setup::new(92);
    s.flame.reconfigure(FlameConfig { project_instructions: false, ..FlameConfig::default() });
    let tree = s.flame.create_tree(A, "Root", "Ship it", Some(s.workspace.path())).unwrap();
    s.flame.append(A, &tree.root, Role::User, "look at the code").unwrap();
    let call = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
    assert!(!call.xml.contains("ROOT:") && !call.xml.contains("PERSONAL:"));
    assert_eq!(call.report.opening.instructions, None);
    // Without a workspace, the person's own file is still read.
    let s = Setup::new(93);
    let tree = s.flame.create_tree(A, "Root", "Ship it", None).unwrap();
    s.flame.append(A, &tree.root, Role::User, "hello").unwrap();
    let call = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
    assert!(call.xml.contains("PERSONAL:") && !call.xml.contains("ROOT:"));
}
