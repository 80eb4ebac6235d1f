//! The window's one read of a frame: the frame and the messages it does not hold yet, with an
//! open reply returned again until it is finished, and a fresh start when the window's copy
//! cannot be extended.

use flame_api::{FrameView, MESSAGE_PAGE};
use flame_model::{Actor, FrameId, Message, MessageId, NewMessage, Role};

use crate::Scratch;

const A: Actor = Actor::Person;

fn texts(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.content.as_str()).collect()
}

/// What the window holds after applying `view` to `held`, as `FrameView` documents it.
fn apply(held: &[Message], view: &FrameView) -> Vec<Message> {
    let mut next: Vec<Message> = match view.kept_through {
        Some(kept) => held.iter().filter(|m| m.id <= kept).cloned().collect(),
        None => Vec::new(),
    };
    next.extend(view.messages.iter().cloned());
    next
}

fn tree_with(s: &Scratch, said: &[&str]) -> (FrameId, Vec<MessageId>) {
    let root = s.flame.create_tree(A, "Chat", "It is answered", None).unwrap().root;
    let ids = said.iter().map(|text| s.flame.append(A, &root, Role::User, text).unwrap().id);
    let ids = ids.collect();
    (root, ids)
}

#[test]
fn a_view_after_a_message_returns_only_the_newer_ones() {
    let s = Scratch::new(1);
    let (frame, ids) = tree_with(&s, &["one", "two", "three"]);
    let first = s.flame.frame_view(&frame, None).unwrap();
    assert_eq!(first.frame.entry.frame.id, frame);
    assert_eq!(first.kept_through, None);
    assert_eq!(texts(&first.messages), ["one", "two", "three"]);
    assert_eq!(first.settled_through, Some(ids[2]));
    assert_eq!(first.seq, s.flame.latest_seq().unwrap());

    s.flame.append(A, &frame, Role::User, "four").unwrap();
    let five = s.flame.append(A, &frame, Role::Note, "five").unwrap();
    let next = s.flame.frame_view(&frame, first.settled_through).unwrap();
    assert_eq!(next.kept_through, Some(ids[2]));
    assert_eq!(texts(&next.messages), ["four", "five"]);
    assert_eq!(next.settled_through, Some(five.id));
    assert_eq!(next.seq, s.flame.latest_seq().unwrap());
    let held = apply(&first.messages, &next);
    assert_eq!(held, s.flame.messages(&frame).unwrap());

    let quiet = s.flame.frame_view(&frame, next.settled_through).unwrap();
    assert_eq!(quiet.kept_through, Some(five.id));
    assert!(quiet.messages.is_empty());
    assert_eq!(quiet.settled_through, Some(five.id));
}

#[test]
fn a_frame_without_messages_has_nothing_settled() {
    let s = Scratch::new(2);
    let (frame, _) = tree_with(&s, &[]);
    let view = s.flame.frame_view(&frame, None).unwrap();
    assert!(view.messages.is_empty());
    assert_eq!((view.kept_through, view.settled_through), (None, None));
}

#[test]
fn a_view_after_a_message_the_frame_does_not_have_starts_over() {
    let s = Scratch::new(3);
    let (frame, _) = tree_with(&s, &["one", "two"]);
    let other = s.flame.push(A, Some(&frame), "Elsewhere", "x").unwrap().id;
    let elsewhere = s.flame.append(A, &other, Role::User, "not here").unwrap().id;
    for after in [elsewhere, MessageId(9_999)] {
        let view = s.flame.frame_view(&frame, Some(after)).unwrap();
        assert_eq!(view.kept_through, None, "after {after}");
        assert_eq!(texts(&view.messages), ["one", "two"], "after {after}");
    }
}

#[test]
fn an_open_reply_is_returned_again_until_it_is_finished() {
    let s = Scratch::new(4);
    let (frame, ids) = tree_with(&s, &["question"]);
    let reply = s.flame.begin_reply(Actor::Agent, &frame, Some("m")).unwrap();
    s.flame.update_reply(reply, "half an").unwrap();

    let first = s.flame.frame_view(&frame, None).unwrap();
    assert_eq!(texts(&first.messages), ["question", "half an"]);
    // The open reply can still change: the next view starts before it.
    assert_eq!(first.settled_through, Some(ids[0]));

    s.flame.update_reply(reply, "half an answer").unwrap();
    let growing = s.flame.frame_view(&frame, first.settled_through).unwrap();
    assert_eq!(growing.kept_through, Some(ids[0]));
    assert_eq!(texts(&growing.messages), ["half an answer"]);
    assert_eq!(growing.settled_through, Some(ids[0]));

    let done = NewMessage::text(Role::Assistant, "the whole answer");
    s.flame.finish_reply(Actor::Agent, reply, &done).unwrap();
    let finished = s.flame.frame_view(&frame, growing.settled_through).unwrap();
    assert_eq!(texts(&finished.messages), ["the whole answer"]);
    assert!(!finished.messages[0].interrupted);
    assert_eq!(finished.settled_through, Some(reply));
    let held = apply(&apply(&first.messages, &growing), &finished);
    assert_eq!(held, s.flame.messages(&frame).unwrap());
}

#[test]
fn a_reply_finished_as_interrupted_is_settled() {
    let s = Scratch::new(5);
    let (frame, _) = tree_with(&s, &["question"]);
    let reply = s.flame.begin_reply(Actor::Agent, &frame, None).unwrap();
    let mut cut = NewMessage::text(Role::Assistant, "cut sh");
    cut.interrupted = true;
    s.flame.finish_reply(Actor::Agent, reply, &cut).unwrap();
    let after = s.flame.append(A, &frame, Role::User, "go on").unwrap().id;
    let view = s.flame.frame_view(&frame, None).unwrap();
    assert_eq!(texts(&view.messages), ["question", "cut sh", "go on"]);
    assert!(view.messages[1].interrupted);
    assert_eq!(view.settled_through, Some(after));
}

#[test]
fn a_view_after_an_open_reply_starts_over() {
    // A window that holds an open reply's unfinished copy and names it as settled must get
    // every message again, the reply included.
    let s = Scratch::new(6);
    let (frame, _) = tree_with(&s, &["question"]);
    let reply = s.flame.begin_reply(Actor::Agent, &frame, None).unwrap();
    s.flame.update_reply(reply, "so far").unwrap();
    let view = s.flame.frame_view(&frame, Some(reply)).unwrap();
    assert_eq!(view.kept_through, None);
    assert_eq!(texts(&view.messages), ["question", "so far"]);
}

#[test]
fn a_view_of_a_missing_frame_is_not_found() {
    let s = Scratch::new(7);
    tree_with(&s, &[]);
    let missing = FrameId::parse("f0000000000").unwrap();
    let err = s.flame.frame_view(&missing, None).unwrap_err();
    assert_eq!(err.code, flame_api::ErrorCode::NotFound);
}

/// Frame `frame` with `count` more messages said in it, named "m0", "m1", ….
fn say_many(s: &Scratch, frame: &FrameId, count: usize) -> Vec<MessageId> {
    (0..count).map(|n| s.flame.append(A, frame, Role::User, &format!("m{n}")).unwrap().id).collect()
}

#[test]
fn a_long_frame_is_viewed_from_its_newest_page_and_read_back_a_page_at_a_time() {
    let s = Scratch::new(8);
    let (frame, _) = tree_with(&s, &[]);
    let page = MESSAGE_PAGE as usize;
    let ids = say_many(&s, &frame, 2 * page + 50);
    let all = s.flame.messages(&frame).unwrap();

    let first = s.flame.frame_view(&frame, None).unwrap();
    assert_eq!(first.kept_through, None);
    assert_eq!(first.messages, all[page + 50..]);
    assert_eq!(first.earlier, (page + 50) as u64);
    assert_eq!(first.settled_through, ids.last().copied());

    // Older pages, read before the oldest message held, until none is left.
    let mut held = first.messages.clone();
    let mut pages = Vec::new();
    loop {
        let older = s.flame.earlier_messages(&frame, held[0].id, None).unwrap();
        pages.push((older.messages.len(), older.earlier));
        held.splice(0..0, older.messages);
        if older.earlier == 0 {
            break;
        }
    }
    assert_eq!(pages, [(page, 50), (50, 0)]);
    assert_eq!(held, all);
    let none = s.flame.earlier_messages(&frame, held[0].id, None).unwrap();
    assert!(none.messages.is_empty());
    assert_eq!(none.earlier, 0);

    // The older messages held are kept by the views that follow.
    let newest = s.flame.append(A, &frame, Role::User, "newest").unwrap().id;
    let next = s.flame.frame_view(&frame, first.settled_through).unwrap();
    assert_eq!(next.earlier, 0);
    assert_eq!(texts(&next.messages), ["newest"]);
    assert_eq!(next.settled_through, Some(newest));
    assert_eq!(apply(&held, &next), s.flame.messages(&frame).unwrap());
}

#[test]
fn a_message_asked_for_is_read_with_everything_from_half_a_page_before_it() {
    let s = Scratch::new(9);
    let (frame, _) = tree_with(&s, &[]);
    let page = MESSAGE_PAGE as usize;
    let ids = say_many(&s, &frame, 3 * page);
    let all = s.flame.messages(&frame).unwrap();
    let first = s.flame.frame_view(&frame, None).unwrap();
    let oldest_held = first.messages[0].id;
    assert_eq!(oldest_held, ids[2 * page]);

    let reach = ids[page - 10];
    let around = s.flame.earlier_messages(&frame, oldest_held, Some(reach)).unwrap();
    assert_eq!(around.messages, all[page - 10 - page / 2..2 * page]);
    assert_eq!(around.earlier, (page - 10 - page / 2) as u64);

    // Near the start, the page starts at the first message.
    let near = s.flame.earlier_messages(&frame, oldest_held, Some(ids[3])).unwrap();
    assert_eq!(near.messages, all[..2 * page]);
    assert_eq!(near.earlier, 0);

    // A message that is not this frame's, or not before the one given, reads nothing.
    let other = s.flame.push(A, Some(&frame), "Elsewhere", "x").unwrap().id;
    let elsewhere = s.flame.append(A, &other, Role::User, "not here").unwrap().id;
    for reach in [elsewhere, oldest_held, ids[3 * page - 1], MessageId(0)] {
        let nothing = s.flame.earlier_messages(&frame, oldest_held, Some(reach)).unwrap();
        assert!(nothing.messages.is_empty(), "reach {reach}");
        assert_eq!(nothing.earlier, 0, "reach {reach}");
    }
}

#[test]
fn a_reply_left_open_before_the_newest_page_is_in_the_first_view() {
    // Every message a window reads before its first view's are closed: an open reply further
    // back than the page comes with the view, with everything after it.
    let s = Scratch::new(10);
    let (frame, _) = tree_with(&s, &["question"]);
    let reply = s.flame.begin_reply(Actor::Agent, &frame, Some("m")).unwrap();
    s.flame.update_reply(reply, "so far").unwrap();
    say_many(&s, &frame, MESSAGE_PAGE as usize + 5);
    let view = s.flame.frame_view(&frame, None).unwrap();
    assert_eq!(view.messages[0].id, reply);
    assert_eq!(view.messages.len(), MESSAGE_PAGE as usize + 6);
    assert_eq!(view.earlier, 1);
    // Nothing in the view is settled; the next view starts over, until the reply is closed.
    assert_eq!(view.settled_through, None);
    let older = s.flame.earlier_messages(&frame, reply, None).unwrap();
    assert_eq!(texts(&older.messages), ["question"]);
    assert_eq!(older.earlier, 0);
}

#[test]
fn earlier_messages_of_a_missing_frame_are_not_found() {
    let s = Scratch::new(11);
    tree_with(&s, &[]);
    let missing = FrameId::parse("f0000000000").unwrap();
    let err = s.flame.earlier_messages(&missing, MessageId(5), None).unwrap_err();
    assert_eq!(err.code, flame_api::ErrorCode::NotFound);
}
