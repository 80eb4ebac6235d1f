//! The `<stack-context>` document: which frames it holds, and each one's XML in each state.
//!
//! The document is cut into units, one per frame. A unit's text is written on its own (with
//! quick-xml's writer) so that its tokens can be counted on their own; the document is the
//! units' texts in document order, so its cost is the sum of theirs. A frame on the path has an
//! opening part (its tag and fields) and a closing part (its end tag), with its children between.
//!
//! Each unit is rendered and counted once per state in an assembly. A kept unit (`KeptUnits`) is
//! taken again only when a key of everything its text is made from is byte for byte the same: the
//! frame's shown fields, its place (depth, kind, distance from the focus, focus, retry), its log
//! path and its file lists as shown.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

use flame_model::{FileTrail, Frame, FrameId, Status};
use flame_tokens::Encoding;
use quick_xml::Writer;
// The maps here are keyed by frame ids and unit indexes from the caller's own store, hashed on
// every assembly, so a fast hasher is used rather than one resisting crafted keys.
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use rustc_hash::FxHashMap as HashMap;

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
    rendered: RefCell<HashMap<(usize, SectionState), Arc<Rendered>>>,
    /// The texts of earlier assemblies, when the caller keeps them (`crate::assemble_kept`).
    kept: Option<RefCell<KeptUnits>>,
    /// Whether the kept texts are taken without checking their keys: the caller promised that
    /// what they are made from is unchanged since the last assembly, which had this focus and
    /// encoding, and used every text kept.
    trust_kept: bool,
}

/// A unit's text in one state, and what it costs.
#[derive(Debug)]
pub(crate) struct Rendered {
    open: String,
    close: String,
    tokens: u64,
    /// [`digest`] of the text, which tells whether a frame changed since the model was told of
    /// it.
    digest: u64,
}

/// FNV-1a (64 bits) of `parts` one after the other: stable across processes and versions, since
/// digests are stored with a frame's context.
pub(crate) fn digest(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in part.as_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// The units' texts of the last assembly, each with everything its text was made from, kept for
/// the next: a frame's text changes far less often than contexts are assembled, and writing it
/// (escaping every field) and counting its tokens was most of an assembly's cost after masking.
/// A text is taken again only when what it would be made from now is byte for byte what it was
/// made from, so a kept text is always the text a fresh assembly writes.
#[derive(Debug, Default)]
pub(crate) struct KeptUnits {
    /// The texts kept, by frame, then by state. Those an assembly does not use are dropped when
    /// it ends, so texts of frames no longer shown do not stay.
    by_frame: HashMap<FrameId, [Option<KeptUnit>; STATES]>,
    /// The number of the assembly under way, which marks the texts it used.
    assembly: u64,
    /// The key being built and the file lists written into it, kept to save their
    /// allocations.
    key: Vec<u8>,
    lists: String,
    /// The focus and encoding of the last assembly.
    made_for: Option<(FrameId, Encoding)>,
    /// Whether the caller promised that the next assembly's frames, log paths and trails are
    /// those of the last (`KeptParts::trust_frames_unchanged`).
    trusted: bool,
}

/// How many states a unit has ([`SectionState`]'s variants, `Dropped` the last).
const STATES: usize = 5;
const _: () = assert!(SectionState::Dropped as usize + 1 == STATES);

#[derive(Debug)]
struct KeptUnit {
    /// What the text was made from, as [`Plan::write_key`] writes it.
    key: Vec<u8>,
    rendered: Arc<Rendered>,
    /// The last assembly that used it.
    used_by: u64,
}

impl KeptUnits {
    /// See `KeptParts::trust_frames_unchanged`.
    pub(crate) fn trust(&mut self) {
        self.trusted = true;
    }

    /// Ends an assembly: only what it used is kept for the next one.
    pub(crate) fn finish(&mut self) {
        let assembly = self.assembly;
        self.by_frame.retain(|_, states| {
            for state in states.iter_mut() {
                if state.as_ref().is_some_and(|unit| unit.used_by != assembly) {
                    *state = None;
                }
            }
            states.iter().any(Option::is_some)
        });
        self.assembly += 1;
    }
}

impl<'a> Plan<'a> {
    /// The plan of `input`'s document; `kept` holds the texts of earlier assemblies to take
    /// where they are still what this one would write.
    pub fn new(
        input: &ContextInput<'a>,
        kept: Option<KeptUnits>,
    ) -> Result<Plan<'a>, ContextError> {
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

        let mut children_of: HashMap<&FrameId, Vec<&Frame>> = HashMap::default();
        for frame in input.frames {
            if let Some(parent) = &frame.parent {
                children_of.entry(parent).or_default().push(frame);
            }
        }
        for list in children_of.values_mut() {
            list.sort_by_key(|f| (f.position, f.id.clone()));
        }

        let mut kept = kept;
        let trust_kept = kept.as_mut().is_some_and(|kept| {
            let made_for = (input.focus.clone(), input.encoding);
            let trusted = kept.trusted && kept.made_for.as_ref() == Some(&made_for);
            kept.trusted = false;
            kept.made_for = Some(made_for);
            trusted
        });

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
            rendered: RefCell::new(HashMap::default()),
            trust_kept,
            kept: kept.map(RefCell::new),
        })
    }

    /// The texts kept for the next assembly: those this one used.
    pub fn into_kept(self) -> Option<KeptUnits> {
        self.kept.map(|kept| {
            let mut kept = kept.into_inner();
            kept.finish();
            kept
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
        let rendered = match &self.kept {
            Some(kept) => self.kept_or_rendered(&mut kept.borrow_mut(), u, state),
            None => Arc::new(self.render_and_count(u, state)),
        };
        let result = with(&rendered);
        self.rendered.borrow_mut().insert((u, state), rendered);
        result
    }

    fn render_and_count(&self, u: usize, state: SectionState) -> Rendered {
        let (open, close) = self.render_unit(u, state);
        let tokens =
            memo::count(self.input.encoding, &open) + memo::count(self.input.encoding, &close);
        let digest = digest(&[&open, &close]);
        Rendered { open, close, tokens, digest }
    }

    /// The digest of unit `u`'s text in full: what the model is told of its frame.
    pub fn digest(&self, u: usize) -> u64 {
        self.with_rendered(u, SectionState::Full, |rendered| rendered.digest)
    }

    /// Unit `u` in full as an element of a note (`<frame …>`, at the note's first level): how a
    /// frame that changed since the model was told of it is told again.
    pub fn note_element(&self, u: usize) -> String {
        let (open, close) = self.render_unit_as(u, SectionState::Full, 1, "frame");
        [open, close].concat()
    }

    /// Unit `u`'s text in `state`: the kept one when it was made from what it would be made
    /// from now, else written and counted now; kept for the next assembly either way.
    fn kept_or_rendered(
        &self,
        kept: &mut KeptUnits,
        u: usize,
        state: SectionState,
    ) -> Arc<Rendered> {
        let frame = &self.units[u].frame.id;
        let assembly = kept.assembly;
        if self.trust_kept {
            let slot =
                kept.by_frame.get_mut(frame).and_then(|states| states[state as usize].as_mut());
            if let Some(unit) = slot {
                unit.used_by = assembly;
                return Arc::clone(&unit.rendered);
            }
        }
        let mut key = std::mem::take(&mut kept.key);
        key.clear();
        self.write_key(u, &mut key, &mut kept.lists);
        if !kept.by_frame.contains_key(frame) {
            kept.by_frame.insert(frame.clone(), Default::default());
        }
        let slot = &mut kept.by_frame.get_mut(frame).expect("just inserted")[state as usize];
        let rendered = match slot {
            Some(unit) if unit.key == key => {
                unit.used_by = assembly;
                Arc::clone(&unit.rendered)
            }
            _ => {
                let rendered = Arc::new(self.render_and_count(u, state));
                let unit = KeptUnit {
                    key: key.clone(),
                    rendered: Arc::clone(&rendered),
                    used_by: assembly,
                };
                *slot = Some(unit);
                rendered
            }
        };
        kept.key = key;
        rendered
    }

    /// Everything [`Plan::render_unit`] reads for unit `u`, whatever the state, each part
    /// preceded by its length so that different parts never write the same bytes.
    fn write_key(&self, u: usize, key: &mut Vec<u8>, lists: &mut String) {
        fn part(key: &mut Vec<u8>, bytes: &[u8]) {
            key.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            key.extend_from_slice(bytes);
        }
        fn optional(key: &mut Vec<u8>, text: Option<&str>) {
            match text {
                Some(text) => {
                    key.push(1);
                    part(key, text.as_bytes());
                }
                None => key.push(0),
            }
        }
        let unit = &self.units[u];
        let frame = unit.frame;
        // How far a frame on the path is from the focus decides which of its fields it shows.
        let from_focus = if unit.on_path { self.path.len() - 1 - unit.depth } else { 0 };
        key.extend_from_slice(&(unit.depth as u64).to_le_bytes());
        key.extend_from_slice(&(from_focus.min(2) as u64).to_le_bytes());
        key.push(unit.kind as u8);
        key.push(u8::from(unit.on_path));
        key.push(u8::from(u == self.focus()));
        key.push(u8::from(self.retried == Some(&frame.id)));
        part(key, self.input.focus.as_str().as_bytes());
        part(key, frame.id.as_str().as_bytes());
        part(key, frame.status.as_str().as_bytes());
        part(key, frame.title.as_bytes());
        part(key, frame.success_criteria.as_bytes());
        optional(key, frame.success_criteria_compacted.as_deref());
        optional(key, frame.status_reason.as_deref());
        optional(key, frame.results.as_deref());
        optional(key, frame.results_compacted.as_deref());
        optional(key, frame.retry_of.as_ref().map(FrameId::as_str));
        for list in [&frame.artifacts, &frame.decisions] {
            key.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for item in list {
                part(key, item.as_bytes());
            }
        }
        optional(key, self.input.log_paths.get(&frame.id).map(String::as_str));
        // A trail holds thousands of paths in a large subtree, but a unit shows only its lists
        // (at most [`MAX_LISTED_FILES`] paths and a count each), so those are what it is keyed by.
        match self.trail_shown(u) {
            Some(trail) => {
                key.push(1);
                for (paths, left_out) in
                    [(&trail.changed, &frame.artifacts[..]), (&trail.read, &[])]
                {
                    lists.clear();
                    let listed = push_file_list(paths, left_out, lists);
                    key.push(u8::from(listed));
                    part(key, lists.as_bytes());
                }
            }
            None => key.push(0),
        }
    }

    /// The whole document with each unit in its state.
    pub fn document(&self, states: &[SectionState]) -> String {
        let size: usize =
            self.rendered.borrow().values().map(|r| r.open.len() + r.close.len()).sum();
        let mut out = String::with_capacity(size + 1);
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
        let depth = self.units[u].depth;
        self.render_unit_as(u, state, depth, if depth == 0 { "stack-context" } else { "child" })
    }

    /// [`Plan::render_unit`] at `depth`, as an element named `name`.
    fn render_unit_as(
        &self,
        u: usize,
        state: SectionState,
        depth: usize,
        name: &str,
    ) -> (String, String) {
        let unit = &self.units[u];
        let frame = unit.frame;
        if state == SectionState::Dropped {
            return (String::new(), String::new());
        }
        let mut xml = Xml::new(depth);
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
            let mut close = Xml::new(depth);
            close.close(name);
            (open, close.finish())
        } else {
            xml.close(name);
            (xml.finish(), String::new())
        }
    }

    /// The trail unit `u` lists, if any: a finished frame's subtree's (`ContextInput::trails`),
    /// or the own trail of a frame on the path above the focus (`ContextInput::path_trails`).
    fn trail_shown(&self, u: usize) -> Option<&FileTrail> {
        let unit = &self.units[u];
        match unit.on_path {
            true if u == self.focus() => None,
            true => self.input.path_trails.get(&unit.frame.id),
            false => self.input.trails.get(&unit.frame.id),
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
        // What the work on the path touched before F began, so that F knows where it happened.
        if let Some(trail) = self.trail_shown(u) {
            write_files(xml, trail, &frame.artifacts);
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

/// How a note tells of a frame the model was told of that is no longer shown: its element with
/// its status and title when it is still in the tree (invalidated), else marked removed (a
/// planned frame deleted).
pub(crate) fn gone_element(id: &FrameId, frame: Option<&Frame>) -> String {
    let mut xml = Xml::new(1);
    match frame {
        Some(frame) => {
            xml.open("frame", &[("id", id.as_str()), ("status", frame.status.as_str())]);
            xml.field(1, "title", &frame.title);
        }
        None => xml.open("frame", &[("id", id.as_str()), ("removed", "true")]),
    }
    xml.close("frame");
    xml.finish()
}

/// A frame's files (a finished frame's subtree's, as [`ContextInput::trails`] holds them, or a
/// path frame's own, from [`ContextInput::path_trails`]): `<files><changed>…</changed><read>…</read></files>`, each list
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
    let mut text = String::new();
    push_file_list(paths, left_out, &mut text).then_some(text)
}

/// [`file_list`] written at the end of `out`; whether there was anything to write.
fn push_file_list(paths: &[String], left_out: &[String], out: &mut String) -> bool {
    // Few artifacts are searched in turn; many, through a set.
    let many: Option<HashSet<&str>> =
        (left_out.len() > 16).then(|| left_out.iter().map(String::as_str).collect());
    let is_left_out = |path: &str| match &many {
        Some(set) => set.contains(path),
        None => left_out.iter().any(|a| a == path),
    };
    // Each path left out is counted once, however often `left_out` names it: a name is
    // counted where it first appears among few, and through the set among many.
    let found = match &many {
        Some(set) => {
            set.iter().filter(|a| paths.binary_search_by(|p| p.as_str().cmp(a)).is_ok()).count()
        }
        None => (0..left_out.len())
            .filter(|&i| {
                !left_out[..i].contains(&left_out[i]) && paths.binary_search(&left_out[i]).is_ok()
            })
            .count(),
    };
    let remaining = paths.len() - found;
    if remaining == 0 {
        return false;
    }
    let start = out.len();
    for path in paths.iter().filter(|p| !is_left_out(p)).take(MAX_LISTED_FILES) {
        if out.len() > start {
            out.push_str(", ");
        }
        out.push_str(path);
    }
    if remaining > MAX_LISTED_FILES {
        use std::fmt::Write;
        let _ = write!(out, ", and {} more", remaining - MAX_LISTED_FILES);
    }
    true
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
