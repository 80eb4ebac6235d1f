//! The `<stack-context>` document: which frames it holds, and each one's XML in each state.
//!
//! The document is cut into units, one per frame. A unit's text is written on its own (with
//! quick-xml's writer) so that its tokens can be counted on their own; the document is the
//! units' texts in document order, so its cost is the sum of theirs. A frame on the path has an
//! opening part (its tag and fields) and a closing part (its end tag), with its children between.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use flame_model::{FileTrail, Frame, FrameId, Status};
use quick_xml::Writer;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};

use crate::{ContextError, ContextInput, MAX_LISTED_FILES, SectionKind, SectionState, memo};

/// One frame of the document.
#[derive(Debug)]
pub(crate) struct Unit<'a> {
    pub frame: &'a Frame,
    pub kind: SectionKind,
    /// Depth in the document: the root is 0.
    pub depth: usize,
    /// For a frame on the path, its units' children in position order (the next frame on the
    /// path among them). Empty for the others.
    pub children: Vec<usize>,
    pub on_path: bool,
    /// How far the frame is from the focus, for the give-way order: for relatives, how many
    /// levels above F's parent their parent is; for siblings, how far their position is from F's.
    pub distance: (usize, u32),
}

pub(crate) struct Plan<'a> {
    pub units: Vec<Unit<'a>>,
    /// Unit indexes of the path, root first, the focus last.
    pub path: Vec<usize>,
    input: ContextInput<'a>,
    /// The failed sibling F retries, if any: it reports its full results.
    retried: Option<&'a FrameId>,
    /// Each unit's text in each state asked for, rendered once: the budget counts it and the
    /// document is written from it.
    rendered: RefCell<HashMap<(usize, SectionState), Rendered>>,
}

/// A unit's text in one state, and what it costs.
struct Rendered {
    open: String,
    close: String,
    tokens: u64,
}

impl<'a> Plan<'a> {
    pub fn new(input: &ContextInput<'a>) -> Result<Plan<'a>, ContextError> {
        let by_id: HashMap<&FrameId, &Frame> = input.frames.iter().map(|f| (&f.id, f)).collect();
        let focus =
            *by_id.get(input.focus).ok_or_else(|| ContextError::NoFocus(input.focus.clone()))?;
        let mut path_frames = vec![focus];
        while let Some(parent) = &path_frames[path_frames.len() - 1].parent {
            let frame = by_id
                .get(parent)
                .ok_or_else(|| ContextError::BrokenPath(input.focus.clone(), parent.clone()))?;
            path_frames.push(frame);
        }
        path_frames.reverse();

        let mut children_of: HashMap<&FrameId, Vec<&Frame>> = HashMap::new();
        for frame in input.frames {
            if let Some(parent) = &frame.parent {
                children_of.entry(parent).or_default().push(frame);
            }
        }
        for list in children_of.values_mut() {
            list.sort_by_key(|f| (f.position, f.id.clone()));
        }

        let last = path_frames.len() - 1;
        let mut units: Vec<Unit<'a>> = Vec::new();
        let mut path = Vec::new();
        for (depth, frame) in path_frames.iter().enumerate() {
            path.push(units.len());
            units.push(Unit {
                frame,
                kind: SectionKind::Ancestor,
                depth,
                children: vec![],
                on_path: true,
                distance: (last - depth, 0),
            });
        }
        for (depth, frame) in path_frames.iter().enumerate() {
            let next_on_path = path_frames.get(depth + 1).map(|f| &f.id);
            let path_position = path_frames.get(depth + 1).map_or(0, |f| f.position);
            let mut children = Vec::new();
            for child in children_of.get(&frame.id).into_iter().flatten() {
                if Some(&child.id) == next_on_path {
                    children.push(path[depth + 1]);
                    continue;
                }
                if child.status == Status::Invalidated {
                    continue;
                }
                let kind = match last - depth {
                    0 => SectionKind::Child,
                    1 => SectionKind::Sibling,
                    _ => SectionKind::Relative,
                };
                children.push(units.len());
                units.push(Unit {
                    frame: child,
                    kind,
                    depth: depth + 1,
                    children: vec![],
                    on_path: false,
                    distance: (last - depth, child.position.abs_diff(path_position)),
                });
            }
            let unit = path[depth];
            units[unit].children = children;
        }
        Ok(Plan {
            units,
            path,
            retried: focus.retry_of.as_ref(),
            input: *input,
            rendered: RefCell::new(HashMap::new()),
        })
    }

    pub fn focus(&self) -> usize {
        self.path[self.path.len() - 1]
    }

    /// The tokens unit `u` costs in `state`, counted once per state.
    pub fn tokens(&self, u: usize, state: SectionState) -> u64 {
        if state == SectionState::Dropped {
            return 0;
        }
        self.with_rendered(u, state, |rendered| rendered.tokens)
    }

    /// Runs `with` on unit `u`'s text in `state`, rendering and counting it the first time.
    fn with_rendered<T>(
        &self,
        u: usize,
        state: SectionState,
        with: impl FnOnce(&Rendered) -> T,
    ) -> T {
        if let Some(rendered) = self.rendered.borrow().get(&(u, state)) {
            return with(rendered);
        }
        let (open, close) = self.render_unit(u, state);
        let tokens =
            memo::count(self.input.encoding, &open) + memo::count(self.input.encoding, &close);
        let mut all = self.rendered.borrow_mut();
        with(all.entry((u, state)).or_insert(Rendered { open, close, tokens }))
    }

    /// The whole document with each unit in its state.
    pub fn document(&self, states: &[SectionState]) -> String {
        let mut out = String::new();
        self.write_tree(self.path[0], states, &mut out);
        out.push('\n');
        out
    }

    fn write_tree(&self, u: usize, states: &[SectionState], out: &mut String) {
        self.with_rendered(u, states[u], |rendered| out.push_str(&rendered.open));
        for &child in &self.units[u].children {
            if self.units[child].on_path {
                self.write_tree(child, states, out);
            } else if states[child] != SectionState::Dropped {
                self.with_rendered(child, states[child], |rendered| out.push_str(&rendered.open));
            }
        }
        self.with_rendered(u, states[u], |rendered| out.push_str(&rendered.close));
    }

    /// The unit's own text in `state`: the opening part and (for a frame on the path) the
    /// closing part.
    fn render_unit(&self, u: usize, state: SectionState) -> (String, String) {
        let unit = &self.units[u];
        let frame = unit.frame;
        if state == SectionState::Dropped {
            return (String::new(), String::new());
        }
        let mut xml = Xml::new(unit.depth);
        let name = if unit.depth == 0 { "stack-context" } else { "child" };
        let mut attrs: Vec<(&str, &str)> =
            vec![("id", frame.id.as_str()), ("status", frame.status.as_str())];
        let is_focus = u == self.focus();
        if is_focus {
            attrs.push(("current", "true"));
            if let Some(original) = &frame.retry_of {
                attrs.push(("retry-of", original.as_str()));
            }
        }
        let retried_by_focus = self.retried == Some(&frame.id);
        let focus_id = self.input.focus.as_str();
        if retried_by_focus {
            attrs.push(("retried-by", focus_id));
        }
        xml.open(name, &attrs);
        if state != SectionState::Bare {
            xml.field(1, "title", &frame.title);
        }
        if state == SectionState::Full || state == SectionState::Compacted {
            if unit.on_path {
                self.write_path_fields(&mut xml, u);
            } else {
                self.write_child_fields(&mut xml, unit, state, retried_by_focus);
            }
        }
        if unit.on_path {
            let open = xml.finish();
            let mut close = Xml::new(unit.depth);
            close.close(name);
            (open, close.finish())
        } else {
            xml.close(name);
            (xml.finish(), String::new())
        }
    }

    fn write_path_fields(&self, xml: &mut Xml, u: usize) {
        let frame = self.units[u].frame;
        let from_focus = self.path.len() - 1 - self.units[u].depth;
        // F and its parent show their full criteria; the rest their compacted form.
        let criteria =
            if from_focus <= 1 { &frame.success_criteria } else { compacted_criteria(frame) };
        xml.field(1, "success-criteria", criteria);
        let partial =
            if from_focus == 0 { frame.results.as_deref() } else { compacted_results(frame) };
        if let Some(results) = partial {
            xml.field(1, "results", results);
        }
        if let (0, Some(log)) = (from_focus, self.input.log_paths.get(&frame.id)) {
            xml.field(1, "log", log);
        }
    }

    fn write_child_fields(
        &self,
        xml: &mut Xml,
        unit: &Unit<'_>,
        state: SectionState,
        retried_by_focus: bool,
    ) {
        let frame = unit.frame;
        match frame.status {
            Status::Planned => xml.field(1, "success-criteria", compacted_criteria(frame)),
            Status::Completed | Status::Failed | Status::Blocked => {
                // F's own children and the attempt F retries report in full; others compacted.
                let full = (unit.kind == SectionKind::Child && state == SectionState::Full)
                    || retried_by_focus;
                let results =
                    if full { frame.results.as_deref() } else { compacted_results(frame) };
                if let Some(results) = results {
                    xml.field(1, "results", results);
                }
                if let Some(reason) = &frame.status_reason {
                    xml.field(1, "reason", reason);
                }
                xml.list(1, "artifacts", "artifact", &frame.artifacts);
                xml.list(1, "decisions", "decision", &frame.decisions);
                if let Some(trail) = self.input.trails.get(&frame.id) {
                    write_files(xml, trail, &frame.artifacts);
                }
                if let Some(log) = self.input.log_paths.get(&frame.id) {
                    xml.field(1, "log", log);
                }
            }
            // Other in-progress branches show title and status only; invalidated ones are not
            // units at all.
            Status::InProgress | Status::Invalidated => {}
        }
    }
}

/// A finished frame's files (its subtree's, as [`ContextInput::trails`] holds them):
/// `<files><changed>…</changed><read>…</read></files>`, each list
/// sorted, comma-separated and cut at [`MAX_LISTED_FILES`] with "and N more"; changed files its
/// artifacts already name are not repeated. Nothing when there is nothing left to list.
fn write_files(xml: &mut Xml, trail: &FileTrail, artifacts: &[String]) {
    debug_assert!(
        [&trail.read, &trail.changed].iter().all(|paths| paths.windows(2).all(|p| p[0] < p[1])),
        "a trail's lists are sorted without repeats"
    );
    let changed = file_list(&trail.changed, artifacts);
    let read = file_list(&trail.read, &[]);
    if changed.is_none() && read.is_none() {
        return;
    }
    xml.start(1, "files");
    if let Some(changed) = changed {
        xml.field(2, "changed", &changed);
    }
    if let Some(read) = read {
        xml.field(2, "read", &read);
    }
    xml.end(1, "files");
}

/// The paths (sorted, without repeats) that `left_out` does not name, joined with ", ", cut at
/// [`MAX_LISTED_FILES`] with "and N more"; `None` when none is left. A large subtree's lists
/// hold thousands of paths, so only the paths shown are copied, and the rest only counted.
fn file_list(paths: &[String], left_out: &[String]) -> Option<String> {
    // Few artifacts are searched in turn; many, through a set.
    let many: Option<HashSet<&str>> =
        (left_out.len() > 16).then(|| left_out.iter().map(String::as_str).collect());
    let is_left_out = |path: &str| match &many {
        Some(set) => set.contains(path),
        None => left_out.iter().any(|a| a == path),
    };
    // Each path left out is counted once, however often `left_out` names it.
    let mut found: Vec<usize> =
        left_out.iter().filter_map(|a| paths.binary_search(a).ok()).collect();
    found.sort_unstable();
    found.dedup();
    let remaining = paths.len() - found.len();
    if remaining == 0 {
        return None;
    }
    let shown: Vec<&String> =
        paths.iter().filter(|p| !is_left_out(p)).take(MAX_LISTED_FILES).collect();
    let mut text = String::with_capacity(shown.iter().map(|p| p.len() + 2).sum::<usize>() + 24);
    for path in shown {
        if !text.is_empty() {
            text.push_str(", ");
        }
        text.push_str(path);
    }
    if remaining > MAX_LISTED_FILES {
        text.push_str(&format!(", and {} more", remaining - MAX_LISTED_FILES));
    }
    Some(text)
}

fn compacted_criteria(frame: &Frame) -> &str {
    frame.success_criteria_compacted.as_deref().unwrap_or(&frame.success_criteria)
}

fn compacted_results(frame: &Frame) -> Option<&str> {
    frame.results_compacted.as_deref().or(frame.results.as_deref())
}

/// Characters XML 1.0 cannot hold (most control characters, U+FFFE and U+FFFF) become U+FFFD;
/// everything else is kept and escaped by quick-xml.
pub fn xml_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
    };
    // Most text is printable ASCII, which is checked a byte at a time.
    let ascii_allowed = |b: &u8| b.is_ascii() && (*b >= b' ' || matches!(b, b'\t' | b'\n' | b'\r'));
    if text.as_bytes().iter().all(ascii_allowed) || text.chars().all(allowed) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars().map(|c| if allowed(c) { c } else { char::REPLACEMENT_CHARACTER }).collect(),
    )
}

/// A small indenting front for quick-xml's writer.
struct Xml {
    writer: Writer<Vec<u8>>,
    depth: usize,
}

impl Xml {
    fn new(depth: usize) -> Xml {
        Xml { writer: Writer::new(Vec::with_capacity(256)), depth }
    }

    /// A new line and two spaces a level, written as they are (what a text event of them
    /// writes), without building the text.
    fn indent(&mut self, extra: usize) {
        let out = self.writer.get_mut();
        out.push(b'\n');
        out.resize(out.len() + 2 * (self.depth + extra), b' ');
    }

    fn event(&mut self, event: Event<'_>) {
        self.writer.write_event(event).expect("writing XML to memory cannot fail");
    }

    fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.indent(0);
        let mut start = BytesStart::new(name);
        for (key, value) in attrs {
            start.push_attribute((*key, xml_safe(value).as_ref()));
        }
        self.event(Event::Start(start));
    }

    fn close(&mut self, name: &str) {
        self.indent(0);
        self.event(Event::End(BytesEnd::new(name)));
    }

    fn field(&mut self, extra: usize, name: &str, text: &str) {
        self.indent(extra);
        self.event(Event::Start(BytesStart::new(name)));
        self.event(Event::Text(BytesText::new(&xml_safe(text))));
        self.event(Event::End(BytesEnd::new(name)));
    }

    fn list(&mut self, extra: usize, name: &str, item: &str, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.start(extra, name);
        for value in items {
            self.field(extra + 1, item, value);
        }
        self.end(extra, name);
    }

    /// Opens an element whose content is other elements.
    fn start(&mut self, extra: usize, name: &str) {
        self.indent(extra);
        self.event(Event::Start(BytesStart::new(name)));
    }

    fn end(&mut self, extra: usize, name: &str) {
        self.indent(extra);
        self.event(Event::End(BytesEnd::new(name)));
    }

    fn finish(self) -> String {
        String::from_utf8(self.writer.into_inner()).expect("the writer wrote UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use super::*;

    /// The lists as they were first made: every path not left out collected, sorted, joined.
    fn file_list_by_collecting(paths: &[String], left_out: &[String]) -> Option<String> {
        let listed: HashSet<&str> = left_out.iter().map(String::as_str).collect();
        let mut kept: Vec<&str> =
            paths.iter().map(String::as_str).filter(|p| !listed.contains(p)).collect();
        kept.sort_unstable();
        kept.dedup();
        if kept.is_empty() {
            return None;
        }
        let mut text = kept[..kept.len().min(MAX_LISTED_FILES)].join(", ");
        if kept.len() > MAX_LISTED_FILES {
            text.push_str(&format!(", and {} more", kept.len() - MAX_LISTED_FILES));
        }
        Some(text)
    }

    proptest::proptest! {
        /// Artifacts among the paths or not, named twice, few or many: the same list.
        #[test]
        fn a_file_list_is_the_list_collecting_every_path_makes(
            paths in proptest::collection::btree_set(0..60u32, 0..50),
            left_out in proptest::collection::vec(0..70u32, 0..40),
        ) {
            let name = |n: &u32| format!("src/{n:02}.rs");
            let paths: Vec<String> = paths.iter().map(name).collect::<BTreeSet<_>>().into_iter().collect();
            let left_out: Vec<String> = left_out.iter().map(name).collect();
            proptest::prop_assert_eq!(
                file_list(&paths, &left_out),
                file_list_by_collecting(&paths, &left_out)
            );
        }
    }
}
