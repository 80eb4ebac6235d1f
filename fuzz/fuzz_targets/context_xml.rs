//! The `<stack-context>` XML round trip: a small tree whose every text comes from the fuzzer
//! (titles, criteria, results, reasons, artifacts, decisions, log paths) is assembled, and the
//! document must parse back with quick-xml, name only frames it was given with their statuses,
//! and give back every text exactly as it went in — after the one change the assembler makes on
//! purpose, characters XML 1.0 cannot hold becoming U+FFFD. With a budget that fits everything,
//! every frame the document should show must be there; with the fuzzer's budget, what remains
//! must still parse and round-trip.
#![no_main]

use std::collections::{HashMap, HashSet};

use arbitrary::Arbitrary;
use flame_context::{Budget, ContextInput, assemble};
use flame_model::{Frame, FrameId, IdSource, Status};
use flame_tokens::Encoding;
use libfuzzer_sys::fuzz_target;
use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};

/// Trees larger than this add nothing the small ones do not reach, and slow every run.
const MAX_FRAMES: usize = 12;

#[derive(Debug, Arbitrary)]
struct TreeInput {
    frames: Vec<FrameInput>,
    focus: u8,
    budget: u16,
    encoding: u8,
}

#[derive(Debug, Arbitrary)]
struct FrameInput {
    parent: u8,
    status: u8,
    title: String,
    criteria: String,
    criteria_compacted: Option<String>,
    results: Option<String>,
    results_compacted: Option<String>,
    reason: Option<String>,
    artifacts: Vec<String>,
    decisions: Vec<String>,
    log: Option<String>,
    retry_of: Option<u8>,
}

const STATUSES: [Status; 6] = [
    Status::Planned,
    Status::InProgress,
    Status::Completed,
    Status::Failed,
    Status::Blocked,
    Status::Invalidated,
];

fuzz_target!(|input: TreeInput| {
    if input.frames.is_empty() {
        return;
    }
    let (frames, logs) = build(&input);
    let focus = frames[usize::from(input.focus) % frames.len()].id.clone();
    let encoding = [Encoding::O200kBase, Encoding::Cl100kBase, Encoding::ClaudeEstimate]
        [usize::from(input.encoding) % 3];
    for (budget, everything_fits) in [(1 << 40, true), (u64::from(input.budget), false)] {
        let context = ContextInput {
            focus: &focus,
            frames: &frames,
            messages: &[],
            encoding,
            budget: Budget::of(budget),
            log_paths: &logs,
            linear_message_tokens: 0,
            workspace: None,
            trails: &std::collections::HashMap::new(),
            path_trails: &std::collections::HashMap::new(),
            keep_tool_results: None,
            allowance: None,
            instructions: None,
            read_back: flame_context::ReadBack::FrameLog,
        };
        let doc = assemble(&context).expect("the frames make a whole tree");
        assert!(doc.system.ends_with(&doc.xml), "the system prompt ends with the document");
        let root = parse(&doc.xml);
        assert_eq!(root.name, "stack-context", "{}", doc.xml);
        let shown = check(&root, &frames, &logs, &focus, &doc.xml);
        if everything_fits {
            assert_eq!(shown, expected(&frames, &focus), "frames shown\n{}", doc.xml);
        }
    }
});

/// The frames: the first is the root, each other one the child of an earlier one, at the next
/// free position among its siblings.
fn build(input: &TreeInput) -> (Vec<Frame>, HashMap<FrameId, String>) {
    let mut ids = IdSource::seeded(1);
    let tree = ids.tree_id();
    let specs = &input.frames[..input.frames.len().min(MAX_FRAMES)];
    let frame_ids: Vec<FrameId> = specs.iter().map(|_| ids.frame_id()).collect();
    let mut next_position = vec![0u32; specs.len()];
    let mut frames = Vec::new();
    let mut logs = HashMap::new();
    for (i, spec) in specs.iter().enumerate() {
        let parent = (i > 0).then(|| usize::from(spec.parent) % i);
        let position = parent.map_or(0, |p| {
            next_position[p] += 1;
            next_position[p] - 1
        });
        let mut frame = Frame::new(
            frame_ids[i].clone(),
            tree.clone(),
            parent.map(|p| frame_ids[p].clone()),
            position,
            spec.title.clone(),
            spec.criteria.clone(),
            STATUSES[usize::from(spec.status) % STATUSES.len()],
            1,
        );
        frame.success_criteria_compacted = spec.criteria_compacted.clone();
        frame.results = spec.results.clone();
        frame.results_compacted = spec.results_compacted.clone();
        frame.status_reason = spec.reason.clone();
        frame.artifacts = spec.artifacts.clone();
        frame.decisions = spec.decisions.clone();
        frame.retry_of = spec.retry_of.map(|r| frame_ids[usize::from(r) % specs.len()].clone());
        if let Some(log) = &spec.log {
            logs.insert(frame.id.clone(), log.clone());
        }
        frames.push(frame);
    }
    (frames, logs)
}

/// The frames a document with room for everything shows: the path from the root to the focus,
/// and every child of a frame on it that is not invalidated.
fn expected(frames: &[Frame], focus: &FrameId) -> HashSet<FrameId> {
    let by_id: HashMap<&FrameId, &Frame> = frames.iter().map(|f| (&f.id, f)).collect();
    let mut path = vec![focus.clone()];
    while let Some(parent) = &by_id[path.last().unwrap()].parent {
        path.push(parent.clone());
    }
    let mut shown: HashSet<FrameId> = path.iter().cloned().collect();
    for frame in frames {
        let under_path = frame.parent.as_ref().is_some_and(|p| path.contains(p));
        if under_path && frame.status != Status::Invalidated {
            shown.insert(frame.id.clone());
        }
    }
    shown
}

/// What the assembler writes for `text`: characters XML 1.0 cannot hold become U+FFFD.
fn xml_safe(text: &str) -> String {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
    };
    text.chars().map(|c| if allowed(c) { c } else { char::REPLACEMENT_CHARACTER }).collect()
}

#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
    children: Vec<Element>,
}

impl Element {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Parses the document with quick-xml, panicking on anything that is not well-formed.
fn parse(xml: &str) -> Element {
    let mut reader = Reader::from_str(xml);
    let mut stack = vec![Element::default()];
    loop {
        let event = reader.read_event().unwrap_or_else(|e| panic!("{e}\n{xml}"));
        match event {
            Event::Start(start) => {
                let name = start.name().as_ref().to_owned();
                let mut element = Element { name, ..Element::default() };
                for attr in start.attributes() {
                    let attr = attr.unwrap_or_else(|e| panic!("{e}\n{xml}"));
                    let value = attr
                        .normalized_value(XmlVersion::Implicit1_0)
                        .unwrap_or_else(|e| panic!("{e}\n{xml}"))
                        .into_owned();
                    let key = attr.key.as_ref().to_owned();
                    element.attrs.push((key, value));
                }
                stack.push(element);
            }
            Event::End(_) => {
                let done = stack.pop().unwrap();
                stack.last_mut().expect("an end tag without a start").children.push(done);
            }
            Event::Text(text) => {
                stack.last_mut().unwrap().text.push_str(&text.xml_content(XmlVersion::Implicit1_0));
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    Ok(None) => match reference.xml_content(XmlVersion::Implicit1_0).as_ref() {
                        "lt" => "<",
                        "gt" => ">",
                        "amp" => "&",
                        "quot" => "\"",
                        "apos" => "'",
                        other => panic!("unknown entity &{other};\n{xml}"),
                    }
                    .to_owned(),
                    Err(e) => panic!("{e}\n{xml}"),
                };
                stack.last_mut().unwrap().text.push_str(&resolved);
            }
            Event::Eof => break,
            other => panic!("the assembler writes no {other:?}\n{xml}"),
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements\n{xml}");
    let mut top = stack.pop().unwrap();
    assert_eq!(top.children.len(), 1, "one root element\n{xml}");
    assert!(top.text.trim().is_empty(), "text outside the root element\n{xml}");
    top.children.pop().unwrap()
}

/// Checks every frame element under `element` against the frame it names, and returns the ids
/// shown.
fn check(
    element: &Element,
    frames: &[Frame],
    logs: &HashMap<FrameId, String>,
    focus: &FrameId,
    xml: &str,
) -> HashSet<FrameId> {
    let id = element.attr("id").unwrap_or_else(|| panic!("a frame element without id\n{xml}"));
    let frame = frames
        .iter()
        .find(|f| f.id.as_str() == id)
        .unwrap_or_else(|| panic!("the document names frame {id}, which it was not given\n{xml}"));
    assert_eq!(element.attr("status"), Some(frame.status.as_str()), "{xml}");
    assert_eq!(element.attr("current") == Some("true"), &frame.id == focus, "{xml}");
    let one_of = |field: &str, text: &str, options: &[Option<&String>]| {
        assert!(
            options.iter().flatten().any(|o| xml_safe(o) == text),
            "<{field}> of {id} reads {text:?}, which is none of {options:?}\n{xml}"
        );
    };
    let mut shown = HashSet::from([frame.id.clone()]);
    for child in &element.children {
        let text = child.text.as_str();
        let leaf = !matches!(child.name.as_str(), "child" | "artifacts" | "decisions");
        assert!(!leaf || child.children.is_empty(), "<{}> holds elements\n{xml}", child.name);
        match child.name.as_str() {
            "child" => {
                for id in check(child, frames, logs, focus, xml) {
                    assert!(shown.insert(id.clone()), "frame {id} is shown twice\n{xml}");
                }
            }
            "title" => one_of("title", text, &[Some(&frame.title)]),
            "success-criteria" => one_of(
                "success-criteria",
                text,
                &[Some(&frame.success_criteria), frame.success_criteria_compacted.as_ref()],
            ),
            "results" => {
                one_of("results", text, &[frame.results.as_ref(), frame.results_compacted.as_ref()])
            }
            "reason" => one_of("reason", text, &[frame.status_reason.as_ref()]),
            "log" => one_of("log", text, &[logs.get(&frame.id)]),
            "artifacts" | "decisions" => {
                let (list, item) = if child.name == "artifacts" {
                    (&frame.artifacts, "artifact")
                } else {
                    (&frame.decisions, "decision")
                };
                assert!(child.children.iter().all(|c| c.name == item), "{xml}");
                let texts: Vec<&str> = child.children.iter().map(|c| c.text.as_str()).collect();
                let wanted: Vec<String> = list.iter().map(|t| xml_safe(t)).collect();
                assert_eq!(texts, wanted, "<{}> of {id}\n{xml}", child.name);
            }
            other => panic!("unexpected element <{other}>\n{xml}"),
        }
    }
    shown
}
