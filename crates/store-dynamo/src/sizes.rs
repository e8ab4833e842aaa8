//! Item sizes as DynamoDB counts them, for the capacity an operation takes
//! (a write unit per started KB, a strongly consistent read unit per
//! started 4 KB, an index entry 100 bytes more than its attributes): the
//! load simulator (`crates/sim`) charges a join by the items this store
//! really writes.

use aws_sdk_dynamodb::types::AttributeValue;
use restock_store::Request;

use crate::Item;
use crate::codec::{queue_entry, request_item};
use crate::keys::due_pk;

/// What an index entry costs beyond its attributes.
pub const INDEX_OVERHEAD: usize = 100;

/// The bytes of `item`: each attribute's name and value.
pub fn item_bytes(item: &Item) -> usize {
    item.iter()
        .map(|(name, v)| name.len() + value_bytes(v))
        .sum()
}

/// A value's bytes: strings and binaries their length; a number about one
/// byte per two significant digits, plus one; a boolean or null one; a
/// list or map 3 bytes, and one more per element, beside its elements.
fn value_bytes(v: &AttributeValue) -> usize {
    let number = |n: &str| {
        let digits = n
            .trim_start_matches(['-', '0', '.'])
            .chars()
            .filter(char::is_ascii_digit)
            .count();
        digits.div_ceil(2) + 1
    };
    match v {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => number(n),
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::Ss(all) => all.iter().map(String::len).sum(),
        AttributeValue::Ns(all) => all.iter().map(|n| number(n)).sum(),
        AttributeValue::Bs(all) => all.iter().map(|b| b.as_ref().len()).sum(),
        AttributeValue::L(all) => 3 + all.iter().map(|v| 1 + value_bytes(v)).sum::<usize>(),
        AttributeValue::M(all) => {
            3 + all
                .iter()
                .map(|(k, v)| 1 + k.len() + value_bytes(v))
                .sum::<usize>()
        }
        _ => 1,
    }
}

/// The items a sign-up writes for `r` beside the small fixed ones (its
/// shard's counter, ticket log entry, presence block and the contact's
/// place): the request item, its queue entry while it waits, and its
/// `due` index entry with the index partition it lands in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinItems {
    /// The request item's bytes.
    pub request: usize,
    /// The queue entry's bytes (`None` while unconfirmed: it has none).
    pub queue_entry: Option<usize>,
    /// The `due` index entry: its partition and bytes.
    pub due: Option<(String, usize)>,
}

/// What a join writes for `r` (see [`JoinItems`]).
pub fn join_items(r: &Request) -> JoinItems {
    let item = request_item(r);
    let request = item_bytes(&item);
    JoinItems {
        request,
        queue_entry: matches!(r.state, restock_core::RequestState::Waiting)
            .then(|| item_bytes(&queue_entry(r))),
        due: r.due().map(|_| (due_pk(&r.id), request + INDEX_OVERHEAD)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_names_and_values_as_dynamodb_does() {
        let item: Item = [
            ("pk".to_owned(), AttributeValue::S("REQ#abc".into())),
            ("n".to_owned(), AttributeValue::N("12345".into())),
            ("ok".to_owned(), AttributeValue::Bool(true)),
            (
                "l".to_owned(),
                AttributeValue::L(vec![AttributeValue::S("ab".into())]),
            ),
        ]
        .into_iter()
        .collect();
        // 2+7, 1+(5 digits → 3+1), 2+1, 1+(3+1+2)
        assert_eq!(item_bytes(&item), 9 + 5 + 3 + 7);
        assert_eq!(value_bytes(&AttributeValue::N("-0.0012".into())), 2);
    }
}
