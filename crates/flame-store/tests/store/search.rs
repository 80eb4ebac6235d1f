//! Search: the FTS5 indexes are kept current by every write that changes what they index (a
//! message, a finished reply, a pop's results, an edit, an import, a deleted tree), a person's
//! words are never FTS5 syntax, and the limits are stated.

use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, Frame, FrameId, IdSource, NewMessage, Role, Status, ToolCall, TreeId};
use flame_store::{
    Change, HitPlace, ImportedMessage, MAX_SEARCH_HITS, MAX_SEARCH_QUERY_CHARS, PlanItem, Pop,
    ReplyOwner, SearchError, SearchHit, Store,
};

const WRITER: ReplyOwner = ReplyOwner { pid: 4242, started: Some(1) };

struct Fixture {
    store: Store,
    ids: IdSource,
    clock: i64,
    tree: TreeId,
    root: FrameId,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let mut ids = IdSource::seeded(18);
        let (tree, root) = (ids.tree_id(), ids.frame_id());
        store.create_tree(change(1), &tree, &root, "Build the app", "It builds", None).unwrap();
        Fixture { store, ids, clock: 1, tree, root, _dir: dir }
    }

    fn change(&mut self) -> Change {
        self.clock += 1;
        change(self.clock)
    }

    fn say(&mut self, frame: &FrameId, text: &str) -> flame_model::Message {
        let c = self.change();
        let message = NewMessage::text(Role::User, text);
        self.store.add_message(c, frame, &message, 3).unwrap()
    }

    fn push(&mut self, parent: &FrameId, title: &str) -> FrameId {
        let id = self.ids.frame_id();
        let c = self.change();
        self.store.push(c, &id, parent, title, "criteria").unwrap();
        id
    }

    /// The hits for `text` everywhere, after checking the indexes against their rows.
    fn find(&self, text: &str) -> Vec<SearchHit> {
        self.store.check_search_index().unwrap();
        self.store.search(text, None, 50).unwrap()
    }
}

fn change(at: i64) -> Change {
    Change { actor: Actor::Cli, at }
}

/// Each hit's snippet with its matched words in brackets.
fn shown(hit: &SearchHit) -> String {
    hit.snippet
        .iter()
        .map(|p| if p.matched { format!("[{}]", p.text) } else { p.text.clone() })
        .collect()
}

fn message_ids(hits: &[SearchHit]) -> Vec<i64> {
    hits.iter()
        .filter_map(|h| match h.place {
            HitPlace::Message { id, .. } => Some(id.0),
            HitPlace::Results => None,
        })
        .collect()
}

#[test]
fn a_message_is_found_by_its_words_with_its_frame_tree_and_snippet() {
    let mut f = Fixture::new();
    let child = f.push(&f.root.clone(), "Design the store");
    let said = f.say(&child, "We should invalidate the Cache when a frame is popped.");
    f.say(&child, "Unrelated words only.");

    let hits = f.find("cache invalidate");
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_eq!((&hit.tree, &hit.frame), (&f.tree, &child));
    assert_eq!(hit.place, HitPlace::Message { id: said.id, role: Role::User });
    assert_eq!(shown(hit), "We should [invalidate] the [Cache] when a frame is popped.");
    // Case and accents are ignored; the last word is a prefix, the others are whole words.
    assert_eq!(f.find("CACHE").len(), 1);
    assert_eq!(f.find("invalid").len(), 1, "the last word is a prefix");
    assert_eq!(f.find("invalid cache").len(), 0, "only the last word is a prefix");
    assert_eq!(f.find("ca").len(), 0, "a two-letter last word is matched whole");
    f.say(&child, "Le café est prêt");
    assert_eq!(shown(&f.find("cafe pret")[0]), "Le [café] est [prêt]");
}

#[test]
fn tool_call_names_and_arguments_are_found() {
    let mut f = Fixture::new();
    let c = f.change();
    let call = NewMessage {
        tool_calls: Some(vec![ToolCall {
            arguments: serde_json::json!({ "path": "src/parser.rs", "content": "fn lexer()\nfn tokenize()" }),
            id: "call_1".into(),
            name: "write_file".into(),
        }]),
        ..NewMessage::text(Role::Assistant, "Writing it now.")
    };
    let stored = f.store.add_message(c, &f.root.clone(), &call, 5).unwrap();
    for words in ["write_file", "parser", "tokenize", "lexer"] {
        let hits = f.find(words);
        assert_eq!(message_ids(&hits), [stored.id.0], "{words}");
        assert!(shown(&hits[0]).contains('['), "the snippet shows the match: {}", shown(&hits[0]));
    }
    // The keys of the call's envelope are not words of the message.
    assert!(f.find("arguments").is_empty());
}

#[test]
fn a_streamed_reply_is_found_once_finished_by_its_final_text() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let c = f.change();
    let reply = f.store.begin_reply(c, &root, Some("model"), WRITER).unwrap();
    f.store.update_reply(reply, "a draftword so far", 3).unwrap();
    assert!(f.find("draftword").is_empty(), "an open reply is not indexed");
    let c = f.change();
    let finished = NewMessage::text(Role::Assistant, "the finalword of the reply");
    f.store.finish_reply(c, reply, &finished, 6).unwrap();
    assert_eq!(message_ids(&f.find("finalword")), [reply.0]);
    assert!(f.find("draftword").is_empty());
    // An interrupted reply, closed with what arrived, is found by that.
    let c = f.change();
    let cut = f.store.begin_reply(c, &root, None, WRITER).unwrap();
    f.store.update_reply(cut, "halfway", 4).unwrap();
    let c = f.change();
    let kept = NewMessage { interrupted: true, ..NewMessage::text(Role::Assistant, "halfway") };
    f.store.finish_reply(c, cut, &kept, 1).unwrap();
    assert_eq!(message_ids(&f.find("halfway")), [cut.0]);
}

#[test]
fn titles_and_results_are_found_and_follow_edits_and_pops() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let child = f.push(&root, "Choose the tokenizer");
    let hits = f.find("tokenizer");
    assert_eq!(hits.len(), 1);
    assert_eq!((&hits[0].frame, hits[0].place), (&child, HitPlace::Results));
    assert_eq!(shown(&hits[0]), "Choose the [tokenizer]");

    let c = f.change();
    let pop = Pop {
        status: PopStatus::Completed,
        results: Some("Picked unicode61 with diacritics removed".into()),
        results_compacted: None,
        artifacts: vec![],
        decisions: vec![],
        reason: None,
    };
    f.store.pop(c, &child, &pop).unwrap();
    let hits = f.find("diacritics");
    assert_eq!(hits.len(), 1);
    assert_eq!(shown(&hits[0]), "Picked unicode61 with [diacritics] removed");
    // A hit in both the title and the results shows the results.
    let c = f.change();
    f.store.update_results(c, &root, "Notes", "the tokenizer is chosen").unwrap();
    let hits = f.find("tokenizer");
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.place == HitPlace::Results));

    // A planned frame's title changes and the old one is gone; a deleted one leaves no hit.
    let c = f.change();
    let planned = PlanItem {
        id: f.ids.frame_id(),
        title: "Measure oldname".into(),
        success_criteria: "c".into(),
        budget: None,
        children: vec![],
    };
    f.store.plan(c, &root, None, std::slice::from_ref(&planned)).unwrap();
    let c = f.change();
    f.store.edit(c, &planned.id, Some("Measure newname"), None).unwrap();
    assert!(f.find("oldname").is_empty());
    assert_eq!(f.find("newname").len(), 1);
    let c = f.change();
    f.store.delete(c, &planned.id).unwrap();
    assert!(f.find("newname").is_empty());
}

#[test]
fn frames_come_first_then_messages_newest_first_within_the_limit() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let first = f.say(&root, "needle one");
    let second = f.say(&root, "needle two");
    let frame = f.push(&root, "The needle frame");
    let hits = f.find("needle");
    assert_eq!(hits[0].frame, frame);
    assert_eq!(hits[0].place, HitPlace::Results);
    assert_eq!(message_ids(&hits), [second.id.0, first.id.0]);
    assert_eq!(f.store.search("needle", None, 2).unwrap().len(), 2);
    assert!(f.store.search("needle", None, 0).unwrap().is_empty());

    for i in 0..MAX_SEARCH_HITS + 10 {
        f.say(&frame, &format!("haystack {i}"));
    }
    let hits = f.store.search("haystack", None, u32::MAX).unwrap();
    assert_eq!(hits.len(), MAX_SEARCH_HITS as usize, "a larger limit gets the most there are");
}

#[test]
fn a_search_within_a_tree_finds_only_that_tree() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    f.say(&root, "shared word here");
    let (other, other_root) = (f.ids.tree_id(), f.ids.frame_id());
    let c = f.change();
    f.store.create_tree(c, &other, &other_root, "Other shared tree", "c", None).unwrap();
    f.say(&other_root, "shared word there");

    assert_eq!(f.find("shared").len(), 3);
    let mine = f.store.search("shared", Some(&f.tree), 50).unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].tree, f.tree);
    assert_eq!(shown(&mine[0]), "[shared] word here", "the tree's id is never the snippet");
    let theirs = f.store.search("shared", Some(&other), 50).unwrap();
    assert_eq!(theirs.len(), 2);
    assert!(theirs.iter().all(|h| h.tree == other));
    // A tree's id is not a word people search for.
    assert!(f.find(other.as_str()).is_empty());
}

#[test]
fn an_imported_tree_is_found_and_a_deleted_tree_is_gone() {
    let mut f = Fixture::new();
    let mut ids = IdSource::seeded(99);
    let tree_id = ids.tree_id();
    let root = Frame::new(
        ids.frame_id(),
        tree_id.clone(),
        None,
        0,
        "Imported session",
        "c",
        Status::InProgress,
        1,
    );
    let mut done = Frame::new(
        ids.frame_id(),
        tree_id.clone(),
        Some(root.id.clone()),
        0,
        "Earlier work",
        "c",
        Status::Completed,
        2,
    );
    done.results = Some("the migration landed".into());
    let tree = imported_tree(&tree_id, "Imported session", &root.id);
    let messages = vec![ImportedMessage {
        frame: 1,
        message: NewMessage::text(Role::Assistant, "the importedword arrived"),
        tokens: 4,
        at: 3,
    }];
    let c = f.change();
    f.store.import_tree(c, &tree, &[root, done.clone()], &messages).unwrap();
    let hits = f.find("importedword");
    assert_eq!((hits.len(), &hits[0].frame), (1, &done.id));
    assert_eq!(f.find("migration landed").len(), 1);

    let c = f.change();
    f.store.delete_tree(c, &tree_id).unwrap();
    assert!(f.find("importedword").is_empty());
    assert!(f.find("migration").is_empty());
    assert!(f.find("imported session").is_empty());
    assert_eq!(f.find("build").len(), 1, "the other tree is still found");
}

#[test]
fn hostile_searches_are_words_never_syntax() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    f.say(&root, "cats AND dogs OR birds NOT fish NEAR the column: title* ^start");
    for text in [
        "\"",
        "*",
        "NEAR(",
        "AND",
        "OR",
        "NOT",
        "-",
        ":",
        "^",
        "(",
        ")",
        "{",
        "}",
        "\"\"\"",
        "NEAR(a b",
        "title:",
        "{content}: x",
        "a OR",
        "AND AND",
        "\u{0}",
        "'; DROP TABLE messages; --",
        "\\",
        "+",
        "🔥",
        "*cats",
        "cats*",
        "c\"a\"t\"s",
    ] {
        assert!(f.store.search(text, None, 50).is_ok(), "{text:?} failed");
        assert!(f.store.search(text, Some(&f.tree), 50).is_ok(), "{text:?} failed in the tree");
    }
    assert_eq!(f.find("AND").len(), 1, "AND is a word");
    assert_eq!(f.find("cats AND dogs").len(), 1);
    assert_eq!(f.find("NEAR(").len(), 1);
    assert_eq!(f.find("column: title*").len(), 1);
    assert!(f.find("\"").is_empty(), "punctuation alone finds nothing");
    assert_eq!(f.store.tree(&f.tree).unwrap().title, "Build the app", "nothing was run");
}

#[test]
fn a_search_past_the_limit_is_refused_saying_the_limit() {
    let f = Fixture::new();
    let long = "word ".repeat(2_000);
    match f.store.search(&long, None, 50) {
        Err(SearchError::TooLong { chars, max }) => {
            assert_eq!((chars, max), (10_000, MAX_SEARCH_QUERY_CHARS));
        }
        other => panic!("expected TooLong, got {other:?}"),
    }
    let err = f.store.search(&"x".repeat(10_000), None, 50).unwrap_err();
    assert!(err.to_string().contains("at most 500 characters"), "{err}");
}

#[test]
fn the_path_runs_from_the_root_to_the_frame() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let child = f.push(&root, "Design");
    let grandchild = f.push(&child, "Pick the cache");
    assert_eq!(
        f.store.title_path(&grandchild).unwrap(),
        ["Build the app", "Design", "Pick the cache"]
    );
    assert_eq!(f.store.title_path(&root).unwrap(), ["Build the app"]);
    assert!(f.store.title_path(&f.ids.frame_id()).is_err());
}

/// Thousands of generated searches mixing punctuation, quotes, operators, accents, combining
/// marks, other scripts, emoji and control characters: none is an FTS5 error.
#[test]
fn generated_searches_never_fail() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    f.say(&root, "Ünïcödé tëxt, 漢字 and emoji 🔥 with quotes \"here\" and NEAR(words)");
    let pieces = [
        "\"", "*", "(", ")", "{", "}", ":", "^", "-", "+", "AND", "OR", "NOT", "NEAR", "NEAR(",
        "a", "ab", "abc", "text", "é", "\u{301}", "e\u{301}", "漢", "字", "🔥", "\u{0}", "\u{1b}",
        "\u{200b}", "²", "ǅ", "ﬁ", "\t", " ", "  ", "'", "\\", "/", ",", ".", "_", "x_y", "ß",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..(state % 6 + 1) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(pieces[(state % pieces.len() as u64) as usize]);
            if state.is_multiple_of(3) {
                text.push(' ');
            }
        }
        for tree in [None, Some(&f.tree)] {
            if let Err(err) = f.store.search(&text, tree, 10) {
                panic!("{text:?} failed: {err}");
            }
        }
    }
}

/// A tree to import, `title`d, focused on its root.
fn imported_tree(id: &TreeId, title: &str, root: &FrameId) -> flame_model::Tree {
    flame_model::Tree {
        id: id.clone(),
        title: title.into(),
        root: root.clone(),
        focus: root.clone(),
        created_at: 1,
        workspace: None,
    }
}

/// A tree of a root and one completed child, imported with one message per text in the child.
fn import_texts(f: &mut Fixture, seed: u64, texts: &[&str]) -> (TreeId, FrameId) {
    let mut ids = IdSource::seeded(seed);
    let tree_id = ids.tree_id();
    let root = Frame::new(
        ids.frame_id(),
        tree_id.clone(),
        None,
        0,
        "Imported",
        "c",
        Status::InProgress,
        1,
    );
    let child = Frame::new(
        ids.frame_id(),
        tree_id.clone(),
        Some(root.id.clone()),
        0,
        "Earlier",
        "c",
        Status::Completed,
        2,
    );
    let tree = imported_tree(&tree_id, "Imported", &root.id);
    let messages: Vec<ImportedMessage> = texts
        .iter()
        .map(|text| ImportedMessage {
            frame: 1,
            message: NewMessage::text(Role::User, *text),
            tokens: 2,
            at: 3,
        })
        .collect();
    let c = f.change();
    f.store.import_tree(c, &tree, &[root, child.clone()], &messages).unwrap();
    (tree_id, child.id)
}

/// An import leaves its messages to be indexed after it; a search indexes them first, so it
/// finds them all the same, and an explicit catch-up says how many it indexed.
#[test]
fn an_imported_tree_is_indexed_before_the_next_search() {
    let mut f = Fixture::new();
    let (_, frame) = import_texts(&mut f, 5, &["first deferredword", "second deferredword"]);
    // The search itself, without the integrity check `find` runs first (which catches up too).
    let hits = f.store.search("deferredword", None, 50).unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|hit| hit.frame == frame));
    assert_eq!(f.store.catch_up_search().unwrap(), 0, "nothing is left");

    import_texts(&mut f, 6, &["third laterword", "fourth laterword", "fifth"]);
    assert_eq!(f.store.catch_up_search().unwrap(), 2 + 3, "two frames and three messages");
    assert_eq!(f.store.catch_up_search().unwrap(), 0);
    assert_eq!(f.find("laterword").len(), 2);
    assert_eq!(f.find("deferredword").len(), 2);
}

/// An import leaves its frames to be indexed after it too. Whatever happens to them before the
/// catch-up (a title edited, a frame deleted, a live frame pushed into the tree, steps of one
/// frame), the index ends up holding each frame once, with what it holds.
#[test]
fn imported_frames_are_indexed_once_with_what_they_hold_at_the_catch_up() {
    let mut f = Fixture::new();
    let mut ids = IdSource::seeded(12);
    let (tree_id, root) = (ids.tree_id(), ids.frame_id());
    let (kept, doomed, other) = (ids.frame_id(), ids.frame_id(), ids.frame_id());
    let planned = |id: &FrameId, position, title: &str| {
        Frame::new(
            id.clone(),
            tree_id.clone(),
            Some(root.clone()),
            position,
            title,
            "c",
            Status::Planned,
            2,
        )
    };
    let frames = [
        Frame::new(root.clone(), tree_id.clone(), None, 0, "Rootword", "c", Status::InProgress, 1),
        planned(&kept, 0, "Plannedword"),
        planned(&doomed, 1, "Doomedword"),
        planned(&other, 2, "Otherword"),
    ];
    let tree = imported_tree(&tree_id, "Imported", &root);
    let c = f.change();
    f.store.import_tree(c, &tree, &frames, &[]).unwrap();

    assert_eq!(f.store.catch_up_search_step(1).unwrap(), 1, "one frame a step");
    let c = f.change();
    f.store.edit(c, &kept, Some("Renamedword"), None).unwrap();
    let c = f.change();
    f.store.delete(c, &doomed).unwrap();
    f.push(&root, "Liveword");
    assert_eq!(f.store.catch_up_search().unwrap(), 2, "the renamed frame and the other one");
    assert_eq!(f.store.catch_up_search().unwrap(), 0);

    for (word, hits) in [
        ("Rootword", 1),
        ("Plannedword", 0),
        ("Renamedword", 1),
        ("Doomedword", 0),
        ("Otherword", 1),
        ("Liveword", 1),
    ] {
        assert_eq!(f.find(word).len(), hits, "{word}");
    }
}

/// A catch-up in steps indexes the lowest ids first, a few each time, until nothing is left; the
/// index stays exact between steps, through a deleted tree, and after the last step.
#[test]
fn a_catch_up_in_steps_indexes_every_message_once() {
    let mut f = Fixture::new();
    let texts = ["stepword one", "stepword two", "stepword three", "stepword four", "five"];
    import_texts(&mut f, 8, &texts);
    assert_eq!(f.store.catch_up_search_step(2).unwrap(), 2, "the two frames first");
    assert_eq!(f.store.catch_up_search_step(2).unwrap(), 2);
    assert_eq!(f.store.catch_up_search_step(2).unwrap(), 2);
    assert_eq!(f.store.catch_up_search_step(2).unwrap(), 1, "the range's last id");
    assert_eq!(f.store.catch_up_search_step(2).unwrap(), 0, "nothing is left");
    assert_eq!(f.find("stepword").len(), 4);

    let (gone, _) = import_texts(&mut f, 9, &["goneword a", "goneword b", "goneword c"]);
    assert_eq!(f.store.catch_up_search_step(2).unwrap(), 2, "the frames");
    assert_eq!(f.store.catch_up_search_step(1).unwrap(), 1);
    let c = f.change();
    f.store.delete_tree(c, &gone).unwrap();
    // The ids still pending are covered, but their messages are gone: nothing is indexed.
    assert_eq!(f.store.catch_up_search_step(10).unwrap(), 2);
    assert!(f.find("goneword").is_empty(), "the integrity check passes and nothing is found");
    assert_eq!(f.find("stepword").len(), 4);
}

/// Messages an import left to index stay out of the index whatever happens to them before the
/// catch-up: a deleted tree's are never indexed, and a live message given one of their ids
/// again (SQLite reuses the largest ids once they are deleted) waits for the catch-up with
/// them, so the index never holds a row twice or a row that is gone.
#[test]
fn messages_left_to_index_are_indexed_once_through_deletes_and_reused_ids() {
    let mut f = Fixture::new();
    let (tree, _) = import_texts(&mut f, 7, &["gone one", "gone two", "gone three"]);
    let c = f.change();
    f.store.delete_tree(c, &tree).unwrap();
    let root = f.root.clone();
    let live = f.say(&root, "reusedword here");
    assert!(live.id.0 <= 3, "the live message reuses an imported message's id: {:?}", live.id);
    // A reply streamed and finished under one of those ids too.
    let c = f.change();
    let reply = f.store.begin_reply(c, &root, Some("model"), WRITER).unwrap();
    assert!(reply.0 <= 3, "{reply:?}");
    f.store.update_reply(reply, "a draftword", 2).unwrap();
    let c = f.change();
    let finished = NewMessage::text(Role::Assistant, "the finishedword");
    f.store.finish_reply(c, reply, &finished, 2).unwrap();
    assert_eq!(f.store.catch_up_search().unwrap(), 2, "only the live messages are left");
    assert!(f.find("gone").is_empty());
    let hits = f.find("reusedword");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].place, HitPlace::Message { id: live.id, role: Role::User });
    assert_eq!(message_ids(&f.find("finishedword")), [reply.0]);
    assert!(f.find("draftword").is_empty());
    // Live writes after the catch-up are indexed by the triggers again.
    f.say(&root, "afterword");
    assert_eq!(f.store.catch_up_search().unwrap(), 0);
    assert_eq!(f.find("afterword").len(), 1);
}

/// An import whose message ids SQLite takes from a deleted import still waiting to be indexed
/// (its range and the new one would overlap) has the old range indexed first, so the catch-up
/// indexes every message once.
#[test]
fn an_import_reusing_the_ids_of_a_deleted_pending_import_is_indexed_once() {
    let mut f = Fixture::new();
    let (old, _) = import_texts(&mut f, 8, &["old one", "old two", "old three"]);
    let c = f.change();
    f.store.delete_tree(c, &old).unwrap();
    let (_, frame) = import_texts(&mut f, 9, &["newword one", "newword two"]);
    assert_eq!(f.store.catch_up_search().unwrap(), 2 + 2, "the new tree's frames and messages");
    let hits = f.find("newword");
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|hit| hit.frame == frame));
    let HitPlace::Message { id, .. } = hits[1].place else { panic!("{hits:?}") };
    assert!(id.0 <= 3, "the new import reuses the deleted one's ids: {id:?}");
    assert!(f.find("old").is_empty());
}
