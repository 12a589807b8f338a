//! Tool call ids unique within a run (docs/behaviour.md §2.1): `toolCall.id` is the key a
//! side-effecting tool uses for idempotency, so two calls of one run never share it, even
//! when a model repeats an id or sends none.

use std::sync::{Arc, Mutex};

use foldhash::{HashSet, HashSetExt};

use crate::state::{Message, ToolCall};

/// The call ids of a run's messages, kept as the run goes (one per run invocation, in its
/// `RunCtx`): a run's messages only grow at its end while it runs, so each turn indexes
/// what was added since the last, and checking a turn's ids no longer costs a scan of the
/// whole conversation (a run of n turns paid n² comparisons).
#[derive(Default)]
pub(crate) struct CallIdIndex(Mutex<Indexed>);

#[derive(Default)]
struct Indexed {
    ids: HashSet<Arc<str>>,
    /// How many of the run's messages are in `ids`.
    messages: usize,
}

impl Indexed {
    fn catch_up(&mut self, messages: &[Message]) {
        if messages.len() < self.messages {
            // Shorter than when last seen: not the same conversation, index it anew.
            *self = Self::default();
        }
        for m in &messages[self.messages..] {
            self.ids
                .extend(m.tool_calls.iter().flatten().map(|c| c.id.clone()));
        }
        self.messages = messages.len();
    }
}

/// Something that holds a call of a model response: the call itself, or the call with what
/// else the run keeps beside it (its arguments' check).
pub(crate) trait HoldsCall {
    /// The call, to rename.
    fn call_mut(&mut self) -> &mut ToolCall;
    /// The call's id.
    fn id(&self) -> &str;
}

impl HoldsCall for ToolCall {
    fn call_mut(&mut self) -> &mut ToolCall {
        self
    }
    fn id(&self) -> &str {
        &self.id
    }
}

impl<T> HoldsCall for (ToolCall, T) {
    fn call_mut(&mut self) -> &mut ToolCall {
        &mut self.0
    }
    fn id(&self) -> &str {
        &self.0.id
    }
}

/// Gives every call of a new model response an id no earlier call of the run has (the
/// run's messages, the caller's earlier conversation included) and no other call of the
/// response has. A call whose id is taken becomes `<id>_<n>`, an empty id `call_<n>`, with
/// the smallest `n` (from 2, resp. 1) that is free. The renamed id is the call's id from
/// then on: in its events, its result, the state and the conversation sent back to the
/// model, so the model sees each call answered under the id it is recorded with.
pub(crate) fn make_unique(index: &CallIdIndex, earlier: &[Message], calls: &mut [impl HoldsCall]) {
    if calls.is_empty() {
        return;
    }
    let mut index = index.0.lock().unwrap_or_else(|p| p.into_inner());
    index.catch_up(earlier);
    let earlier_taken = &index.ids;
    // Nearly always every id is new: checked without copying one (a few pairwise).
    let distinct = if calls.len() <= FEW {
        all_distinct(calls)
    } else {
        all_distinct_many(calls)
    };
    if distinct && calls.iter().all(|c| !earlier_taken.contains(c.id())) {
        return;
    }
    let mut taken: HashSet<Arc<str>> = HashSet::new();
    for held in calls.iter_mut() {
        let call = held.call_mut();
        let is_taken = |id: &str| earlier_taken.contains(id) || taken.contains(id);
        if call.id.is_empty() || is_taken(&call.id) {
            call.id = free_id(&call.id, is_taken).into();
        }
        taken.insert(call.id.clone());
    }
}

/// Up to how many calls a response's ids are checked without a set.
const FEW: usize = 8;

/// Whether the calls' ids are non-empty and pairwise different.
fn all_distinct(calls: &[impl HoldsCall]) -> bool {
    calls
        .iter()
        .enumerate()
        .all(|(i, c)| !c.id().is_empty() && calls[..i].iter().all(|other| other.id() != c.id()))
}

/// [`all_distinct`] for many calls: one set of borrowed ids.
fn all_distinct_many(calls: &[impl HoldsCall]) -> bool {
    let mut seen = HashSet::with_capacity(calls.len());
    calls
        .iter()
        .all(|c| !c.id().is_empty() && seen.insert(c.id()))
}

/// The first of `<id>_2`, `<id>_3`, … (`call_1`, `call_2`, … for an empty id) not taken.
fn free_id(id: &str, taken: impl Fn(&str) -> bool) -> String {
    let (base, first) = if id.is_empty() { ("call", 1) } else { (id, 2) };
    (first..)
        .map(|n| format!("{base}_{n}"))
        .find(|candidate| !taken(candidate))
        .expect("a free id exists among unboundedly many")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall::new(id, "t", json!({}))
    }

    fn ids(calls: &[ToolCall]) -> Vec<&str> {
        calls.iter().map(|c| &*c.id).collect()
    }

    #[test]
    fn distinct_ids_are_kept() {
        let mut calls = vec![call("a"), call("b")];
        make_unique(&CallIdIndex::default(), &[], &mut calls);
        assert_eq!(ids(&calls), ["a", "b"]);
    }

    #[test]
    fn a_repeated_id_in_one_response_gets_the_next_free_suffix() {
        let mut calls = vec![call("d"), call("d"), call("d_2"), call("d")];
        make_unique(&CallIdIndex::default(), &[], &mut calls);
        assert_eq!(ids(&calls), ["d", "d_2", "d_2_2", "d_3"]);
    }

    #[test]
    fn an_id_used_earlier_in_the_run_is_renamed() {
        let earlier = vec![Message {
            tool_calls: Some(vec![call("d"), call("call_1")]),
            ..Message::assistant(String::new())
        }];
        let mut calls = vec![call("d"), call(""), call("")];
        make_unique(&CallIdIndex::default(), &earlier, &mut calls);
        assert_eq!(ids(&calls), ["d_2", "call_2", "call_3"]);
    }

    #[test]
    fn a_run_s_index_sees_the_messages_added_since_its_last_turn() {
        let index = CallIdIndex::default();
        let mut messages = vec![Message {
            tool_calls: Some(vec![call("a")]),
            ..Message::assistant(String::new())
        }];
        let mut first = vec![call("b")];
        make_unique(&index, &messages, &mut first);
        assert_eq!(ids(&first), ["b"]);
        messages.push(Message {
            tool_calls: Some(first),
            ..Message::assistant(String::new())
        });
        let mut next = vec![call("b"), call("a")];
        make_unique(&index, &messages, &mut next);
        assert_eq!(ids(&next), ["b_2", "a_2"]);
        // Another, shorter conversation: indexed anew.
        let mut other = vec![call("b")];
        make_unique(&index, &messages[..1], &mut other);
        assert_eq!(ids(&other), ["b"]);
    }

    #[test]
    fn many_calls_of_one_response_are_checked_as_a_few() {
        let earlier = vec![Message {
            tool_calls: Some(vec![call("x"), call("y_2")]),
            ..Message::assistant(String::new())
        }];
        let mut many: Vec<ToolCall> = (0..20).map(|i| call(&format!("c{i}"))).collect();
        make_unique(&CallIdIndex::default(), &earlier, &mut many);
        assert_eq!(ids(&many)[19], "c19", "distinct new ids are kept");
        many.extend([call("x"), call("y"), call("y"), call("")]);
        make_unique(&CallIdIndex::default(), &earlier, &mut many);
        let response = many.split_off(20);
        assert_eq!(ids(&response), ["x_2", "y", "y_3", "call_1"]);
        let mut repeated = vec![call("x")];
        make_unique(&CallIdIndex::default(), &earlier, &mut repeated);
        assert_eq!(
            ids(&repeated),
            ["x_2"],
            "one call whose id was used earlier"
        );
    }
}
