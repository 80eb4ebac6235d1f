//! Contexts read through the real store: the spec's tree, a marker message in every frame, and
//! for every focus only that frame's own messages in its context.

use flame_api::{Budget, PopRequest};
use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, FrameId, Role};

use crate::Scratch;

const A: Actor = Actor::Person;

fn done(results: &str) -> PopRequest {
    PopRequest {
        status: PopStatus::Completed,
        results: Some(results.to_owned()),
        results_compacted: Some(format!("{results} (compact)")),
        artifacts: vec![],
        decisions: vec![],
        reason: None,
    }
}

/// Root; A with A1, A2 completed; B in progress with B1 in progress and B2 planned. Every frame
/// has a message `message-<title>`.
fn spec_tree(s: &Scratch) -> Vec<(String, FrameId)> {
    let tree = s.flame.create_tree(A, "Root", "Complete working app", None).unwrap();
    let say = |id: &FrameId, title: &str| {
        s.flame.append(A, id, Role::User, &format!("message-{title}")).unwrap();
    };
    say(&tree.root, "Root");
    let a = s.flame.push(A, None, "A", "auth").unwrap().id;
    say(&a, "A");
    let a1 = s.flame.push(A, None, "A1", "login").unwrap().id;
    say(&a1, "A1");
    s.flame.pop(A, None, &done("results-A1")).unwrap();
    let a2 = s.flame.push(A, None, "A2", "logout").unwrap().id;
    say(&a2, "A2");
    s.flame.pop(A, None, &done("results-A2")).unwrap();
    s.flame.pop(A, None, &done("results-A")).unwrap();
    let b = s.flame.push(A, None, "B", "api").unwrap().id;
    say(&b, "B");
    let b1 = s.flame.push(A, None, "B1", "crud").unwrap().id;
    say(&b1, "B1");
    let b2 = s
        .flame
        .plan(
            A,
            Some(&b),
            None,
            &[flame_api::PlanSpec {
                title: "B2".into(),
                success_criteria: "pagination".into(),
                children: vec![],
            }],
        )
        .unwrap()
        .remove(0)
        .id;
    say(&b2, "B2");
    vec![
        ("Root".into(), tree.root),
        ("A".into(), a),
        ("A1".into(), a1),
        ("A2".into(), a2),
        ("B".into(), b),
        ("B1".into(), b1),
        ("B2".into(), b2),
    ]
}

#[test]
fn a_context_never_holds_another_frames_messages() {
    let s = Scratch::new(21);
    let frames = spec_tree(&s);
    for (title, id) in &frames {
        let doc = s.flame.context(Some(id), None).unwrap();
        let text = format!(
            "{}\n{}",
            doc.system,
            doc.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n")
        );
        for (other, _) in &frames {
            let marker = format!("message-{other}\n");
            assert_eq!(
                format!("{text}\n").contains(&marker),
                other == title,
                "focus {title}, marker {marker:?}:\n{text}"
            );
        }
        assert!(doc.report.fits);
    }
}

#[test]
fn the_context_reports_linear_tokens_and_uses_stored_counts() {
    let s = Scratch::new(22);
    let frames = spec_tree(&s);
    let b1 = &frames[5].1;
    let doc = s.flame.context(Some(b1), Some(Budget::of(50_000))).unwrap();
    assert_eq!(doc.report.budget, 50_000);
    let stored: u64 = s.flame.messages(b1).unwrap().iter().map(|m| m.tokens).sum();
    let history =
        doc.report.sections.iter().find(|s| s.kind == flame_context::SectionKind::History).unwrap();
    assert_eq!(history.tokens, stored + flame_context::MESSAGE_OVERHEAD);
    assert!(
        doc.report.linear_tokens > doc.report.sections[0].tokens,
        "every message of the tree counts in the linear total"
    );
    let log = s.flame.frame(b1).unwrap().log_path;
    assert!(doc.xml.contains(&log), "the focus's log path is in its context");
}
