//! The spec's tree — Root; A with A1, A2 completed; B in progress with B1 in progress and B2
//! planned — with a marker in every field and message of every frame. For every possible focus,
//! the markers that must appear do, and no other marker does.

use flame_model::{Frame, FrameId, Status};

use crate::{context, marked, message};

// Ids chosen so each frame's name reads in its id.
const ROOT: &str = "f000000r00t";
const A: &str = "f00000000a0";
const A1: &str = "f00000000a1";
const A2: &str = "f00000000a2";
const B: &str = "f00000000b0";
const B1: &str = "f00000000b1";
const B2: &str = "f00000000b2";

pub fn spec_tree() -> Vec<Frame> {
    vec![
        marked(ROOT, None, 0, Status::InProgress),
        marked(A, Some(ROOT), 0, Status::Completed),
        marked(A1, Some(A), 0, Status::Completed),
        marked(A2, Some(A), 1, Status::Completed),
        marked(B, Some(ROOT), 1, Status::InProgress),
        marked(B1, Some(B), 0, Status::InProgress),
        marked(B2, Some(B), 1, Status::Planned),
    ]
}

pub fn names() -> [(&'static str, &'static str); 7] {
    [("root", ROOT), ("a", A), ("a1", A1), ("a2", A2), ("b", B), ("b1", B1), ("b2", B2)]
}

/// Which of a frame's markers DESIGN.md §3 puts in F's context, given the frame's relation to F.
fn expected(frames: &[Frame], focus: &Frame, frame: &Frame) -> Vec<String> {
    let id = frame.id.as_str();
    let path: Vec<&Frame> = {
        let mut path = vec![focus];
        while let Some(p) = &path[path.len() - 1].parent {
            path.push(frames.iter().find(|f| &f.id == p).unwrap());
        }
        path
    };
    let on_path = path.iter().position(|f| f.id == frame.id);
    let parent_on_path = frame.parent.as_ref().and_then(|p| path.iter().position(|f| &f.id == p));
    let mut want = Vec::new();
    if let Some(distance) = on_path {
        want.push(format!("title-{id}"));
        want.push(if distance <= 1 {
            format!("criteria-{id}")
        } else {
            format!("crit-compact-{id}")
        });
        if frame.results.is_some() {
            want.push(if distance == 0 {
                format!("results-{id}")
            } else {
                format!("res-compact-{id}")
            });
        }
    } else if let Some(parent_distance) = parent_on_path {
        want.push(format!("title-{id}"));
        match frame.status {
            Status::Planned => want.push(format!("crit-compact-{id}")),
            Status::Completed | Status::Failed | Status::Blocked => {
                want.push(if parent_distance == 0 {
                    format!("results-{id}")
                } else {
                    format!("res-compact-{id}")
                });
                want.push(format!("artifact-{id}"));
                want.push(format!("decision-{id}"));
                if frame.status_reason.is_some() {
                    want.push(format!("reason-{id}"));
                }
            }
            _ => {}
        }
    }
    want
}

fn all_markers(frame: &Frame) -> Vec<String> {
    let id = frame.id.as_str();
    [
        "title",
        "criteria",
        "crit-compact",
        "results",
        "res-compact",
        "artifact",
        "decision",
        "reason",
        "message",
    ]
    .iter()
    .map(|kind| format!("{kind}-{id}"))
    .collect()
}

#[test]
fn every_focus_sees_exactly_what_design_says() {
    let frames = spec_tree();
    for focus in &frames {
        let messages = vec![message(1, &focus.id, &format!("message-{}", focus.id), 5)];
        let doc = context(&frames, &focus.id, &messages, 100_000);
        let everything = format!(
            "{}\n{}\n{}",
            doc.system,
            doc.xml,
            doc.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n")
        );
        for frame in &frames {
            let want = expected(&frames, focus, frame);
            for marker in all_markers(frame) {
                let present = everything.contains(&marker);
                let should = want.contains(&marker)
                    || (marker == format!("message-{}", focus.id) && frame.id == focus.id);
                assert_eq!(
                    present, should,
                    "focus {}: marker {marker} present={present}\n{}",
                    focus.title, doc.xml
                );
            }
        }
        assert!(doc.report.fits);
    }
}

#[test]
fn off_path_subtrees_and_invalidated_frames_stay_out() {
    let mut frames = spec_tree();
    let mut gone = marked("f00000000b3", Some(B), 2, Status::Invalidated);
    gone.title = "title-gone".into();
    frames.push(gone);
    let b1 = FrameId::parse(B1).unwrap();
    let doc = context(&frames, &b1, &[], 100_000);
    assert!(!doc.xml.contains("title-gone"));
    assert!(
        !doc.xml.contains(A1) && !doc.xml.contains(A2),
        "A's children are below an off-path frame"
    );
}

#[test]
fn a_retry_sees_the_failed_attempt_in_full() {
    let mut frames = spec_tree();
    let failed = marked("f00000000b4", Some(B), 2, Status::Failed);
    let mut retry = marked("f00000000b5", Some(B), 3, Status::InProgress);
    retry.retry_of = Some(failed.id.clone());
    frames.push(failed.clone());
    frames.push(retry.clone());
    let doc = context(&frames, &retry.id, &[], 100_000);
    assert!(doc.xml.contains(&format!("results-{}", failed.id)), "{}", doc.xml);
    assert!(doc.xml.contains(&format!("reason-{}", failed.id)));
    assert!(doc.xml.contains(&format!("retried-by=\"{}\"", retry.id)));
    assert!(doc.xml.contains(&format!("retry-of=\"{}\"", failed.id)));
}

#[test]
fn golden_documents_for_every_focus() {
    let frames = spec_tree();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/context/golden");
    let bless = std::env::var_os("FLAME_BLESS").is_some();
    for (name, id) in names() {
        let focus = FrameId::parse(id).unwrap();
        let doc = context(&frames, &focus, &[], 100_000);
        let path = dir.join(format!("spec-tree-{name}.xml"));
        if bless {
            std::fs::write(&path, &doc.xml).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            golden == doc.xml,
            "{} differs from the assembled context (run `make bless` if the change is intended):\n{}",
            path.display(),
            doc.xml
        );
    }
}

#[test]
fn the_same_input_gives_the_same_document() {
    let frames = spec_tree();
    let mut shuffled = frames.clone();
    shuffled.reverse();
    let focus = FrameId::parse(B1).unwrap();
    assert_eq!(context(&frames, &focus, &[], 100_000), context(&shuffled, &focus, &[], 100_000));
}
