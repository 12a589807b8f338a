//! Tool call ids unique within a run (docs/behaviour.md §2.1): `toolCall.id` is the key a
//! side-effecting tool uses for idempotency, so two calls of one run never share it, even
//! when a model repeats an id or sends none.

use std::collections::HashSet;

use crate::state::{Message, ToolCall};

/// Gives every call of a new model response an id no earlier call of the run has (the
/// run's messages, the caller's earlier conversation included) and no other call of the
/// response has. A call whose id is taken becomes `<id>_<n>`, an empty id `call_<n>`, with
/// the smallest `n` (from 2, resp. 1) that is free. The renamed id is the call's id from
/// then on: in its events, its result, the state and the conversation sent back to the
/// model, so the model sees each call answered under the id it is recorded with.
pub(crate) fn make_unique<'a>(
    earlier: &[Message],
    calls: impl IntoIterator<Item = &'a mut ToolCall>,
) {
    let mut calls: Vec<&mut ToolCall> = calls.into_iter().collect();
    if calls.is_empty() {
        return;
    }
    let earlier_ids = || {
        earlier
            .iter()
            .flat_map(|m| m.tool_calls.iter().flatten())
            .map(|c| c.id.as_str())
    };
    // Nearly always every id is new: a run going turn by turn checks its few new ids
    // against its earlier ones without hashing (or copying) each earlier id every turn.
    if calls.len() <= FEW
        && all_distinct(&calls)
        && earlier_ids().all(|id| !calls.iter().any(|c| c.id == id))
    {
        return;
    }
    let earlier_taken: HashSet<&str> = earlier_ids().collect();
    let mut taken: HashSet<String> = HashSet::new();
    for call in calls.iter_mut() {
        let is_taken = |id: &str| earlier_taken.contains(id) || taken.contains(id);
        if call.id.is_empty() || is_taken(&call.id) {
            call.id = free_id(&call.id, is_taken);
        }
        taken.insert(call.id.clone());
    }
}

/// Up to how many calls a response's ids are checked without a set.
const FEW: usize = 8;

/// Whether the calls' ids are non-empty and pairwise different.
fn all_distinct(calls: &[&mut ToolCall]) -> bool {
    calls
        .iter()
        .enumerate()
        .all(|(i, c)| !c.id.is_empty() && calls[..i].iter().all(|other| other.id != c.id))
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
        ToolCall {
            id: id.into(),
            name: "t".into(),
            input: json!({}),
        }
    }

    fn ids(calls: &[ToolCall]) -> Vec<&str> {
        calls.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn distinct_ids_are_kept() {
        let mut calls = vec![call("a"), call("b")];
        make_unique(&[], calls.iter_mut());
        assert_eq!(ids(&calls), ["a", "b"]);
    }

    #[test]
    fn a_repeated_id_in_one_response_gets_the_next_free_suffix() {
        let mut calls = vec![call("d"), call("d"), call("d_2"), call("d")];
        make_unique(&[], calls.iter_mut());
        assert_eq!(ids(&calls), ["d", "d_2", "d_2_2", "d_3"]);
    }

    #[test]
    fn an_id_used_earlier_in_the_run_is_renamed() {
        let earlier = vec![Message {
            tool_calls: Some(vec![call("d"), call("call_1")]),
            ..Message::assistant(String::new())
        }];
        let mut calls = vec![call("d"), call(""), call("")];
        make_unique(&earlier, calls.iter_mut());
        assert_eq!(ids(&calls), ["d_2", "call_2", "call_3"]);
    }

    #[test]
    fn many_calls_of_one_response_are_checked_as_a_few() {
        let earlier = vec![Message {
            tool_calls: Some(vec![call("x"), call("y_2")]),
            ..Message::assistant(String::new())
        }];
        let mut many: Vec<ToolCall> = (0..20).map(|i| call(&format!("c{i}"))).collect();
        make_unique(&earlier, many.iter_mut());
        assert_eq!(ids(&many)[19], "c19", "distinct new ids are kept");
        many.extend([call("x"), call("y"), call("y"), call("")]);
        let mut response = many.split_off(20);
        make_unique(&earlier, many.iter_mut().chain(response.iter_mut()));
        assert_eq!(ids(&response), ["x_2", "y", "y_3", "call_1"]);
        let mut repeated = vec![call("x")];
        make_unique(&earlier, repeated.iter_mut());
        assert_eq!(
            ids(&repeated),
            ["x_2"],
            "one call whose id was used earlier"
        );
    }
}
