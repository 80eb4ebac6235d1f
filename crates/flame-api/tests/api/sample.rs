//! The sample tree of a first start, and deleting a tree.

use flame_api::ErrorCode;
use flame_model::{Actor, Role, Status};

use crate::Scratch;

#[test]
fn a_new_data_directory_gets_the_sample_tree_once_and_it_can_be_deleted() {
    let s = Scratch::new(11);
    let sample = s.flame.offer_sample_tree(Actor::Person).unwrap().expect("made on first start");
    assert_eq!(sample.title, "Build the application");
    let status = s.flame.status(None).unwrap();
    assert_eq!(status.tree.id, sample.id, "the sample is current");
    let focused = s.flame.frame(&status.focus).unwrap();
    assert_eq!(focused.frame.title, "CRUD Endpoints");
    assert_eq!(focused.frame.status, Status::InProgress);
    let by_title = |t: &str| status.frames.iter().find(|f| f.frame.title == t).unwrap();
    assert_eq!(by_title("User Authentication").frame.status, Status::Completed);
    assert_eq!(by_title("Pagination").frame.status, Status::Planned);
    // Messages are counted as stored ones are, and the focused frame's context holds the
    // completed sibling's results, as in the specification's example.
    let messages = s.flame.messages(&status.focus).unwrap();
    assert!(messages.iter().all(|m| m.tokens > 0));
    assert!(messages.iter().any(|m| m.role == Role::Assistant && m.content.contains("```ts")));
    let doc = s.flame.context(None, None).unwrap();
    assert!(doc.xml.contains("Implemented JWT-based auth with refresh tokens."));
    // Every log reads as the import's, and is written to its file when first read.
    for entry in &status.frames {
        assert!(s.flame.log(&entry.frame.id).unwrap().contains("imported by"));
        assert!(std::path::Path::new(&entry.log_path).exists(), "{}", entry.log_path);
    }
    assert_eq!(s.flame.offer_sample_tree(Actor::Person).unwrap(), None, "only once");

    let deleted = s.flame.delete_tree(Actor::Person, &sample.id).unwrap();
    assert_eq!(deleted.frames, status.frames.len() as u64);
    assert!(deleted.messages > 5);
    assert!(s.flame.trees().unwrap().is_empty());
    assert_eq!(s.flame.status(None).unwrap_err().code, ErrorCode::NotFound);
    let logs = std::path::Path::new(&status.frames[0].log_path).parent().unwrap().to_owned();
    assert!(!logs.exists(), "the tree's logs are gone: {}", logs.display());

    // A restart does not bring the deleted sample back.
    let again = s.reopen(12);
    assert_eq!(again.offer_sample_tree(Actor::Person).unwrap(), None);
    assert!(again.trees().unwrap().is_empty());
}

#[test]
fn a_data_directory_that_already_has_work_gets_no_sample() {
    let s = Scratch::new(13);
    let mine = s.flame.create_tree(Actor::Cli, "My work", "done", None).unwrap();
    assert_eq!(s.flame.offer_sample_tree(Actor::Person).unwrap(), None);
    let trees = s.flame.trees().unwrap();
    assert_eq!(trees.len(), 1);
    assert_eq!(trees[0].tree.id, mine.id);
}

#[test]
fn deleting_one_tree_leaves_the_others_and_their_logs() {
    let s = Scratch::new(14);
    let first = s.flame.create_tree(Actor::Person, "First", "c", None).unwrap();
    let second = s.flame.create_tree(Actor::Person, "Second", "c", None).unwrap();
    s.flame.append(Actor::Person, &first.root, Role::User, "hello").unwrap();
    s.flame.focus(Actor::Person, &first.root).unwrap();
    s.flame.delete_tree(Actor::Person, &first.id).unwrap();
    let status = s.flame.status(None).unwrap();
    assert_eq!(status.tree.id, second.id, "the remaining tree is current");
    assert!(std::path::Path::new(&status.frames[0].log_path).exists());
    let err = s.flame.delete_tree(Actor::Person, &first.id).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{}", err.message);
}
