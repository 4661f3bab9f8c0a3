//! The laptop's boxes on every machine of the config, for `list`, `ls`, `watch` and
//! the verbs that find a box by name there: each machine asked at once, on a thread
//! of its own, within the caller's deadline — [`LISTING`] for a listing, so that a
//! machine that takes the connection and never answers costs that, not a hang.
//!
//! Every answer is kept ([`crate::state::machine_lists`]), per machine and
//! repository; a machine that cannot be asked is shown by what it last answered,
//! each of those boxes marked `"stale": true`. A machine never marks its own boxes
//! stale: the field is taken out of every fresh answer.

use std::time::Duration;

use serde_json::Value;

use super::{boxes, RemoteError};
use crate::config::Machine;
use crate::state::machine_lists;

/// How long `list`, `ls` and `watch` wait for a machine: past it, the machine is one
/// warning and its last-known boxes. The first connection to a healthy machine (the
/// shared connection set up: TCP, key exchange, login) and its treebox's answer fit
/// well within it on a LAN; the listing as a whole answers within 2 s.
pub const LISTING: Duration = Duration::from_millis(1500);

/// What one machine said of the repositories asked about.
#[derive(Debug)]
pub struct Asked {
    /// The machine's name in the config.
    pub machine: String,
    /// Per repository key asked, in order: its boxes there (`list --json` entries,
    /// objects with a string `name`, with `machine` set), marked `"stale": true` when
    /// they are the last-known ones.
    pub boxes: Vec<Vec<Value>>,
    /// Why it could not be asked now, and when it last answered (seconds since the
    /// epoch, the oldest answer kept; `None`: none is).
    pub failed: Option<(RemoteError, Option<u64>)>,
    /// Asked of one repository: its mirror's branches there, `{branch: commit}` (what
    /// `create --on` would otherwise ask for again), unchecked.
    pub heads: Option<Value>,
}

/// A machine that could not be asked for its boxes this time, as `list --json`, `ls
/// --json` and `watch --once --json` say it (`unreachable`): its boxes are the ones it
/// last listed, marked `stale`.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unreached {
    /// Its name in the config.
    pub machine: String,
    /// Why, in one line (its control characters escaped).
    pub message: String,
    /// When it last answered, in seconds since the epoch; `None`: never (no boxes of
    /// it are shown).
    pub last_answer: Option<u64>,
}

impl Asked {
    /// Why it was not asked, as documents say it; `None` when it answered.
    pub fn unreached(&self) -> Option<Unreached> {
        let (e, at) = self.failed.as_ref()?;
        Some(Unreached {
            machine: self.machine.clone(),
            message: crate::sanitize::line(&e.to_string()),
            last_answer: *at,
        })
    }
}

/// The boxes of the repositories whose keys are `keys` ([`boxes::key_for`]) on each of
/// `machines`, all asked at once, each within `limit` (with which ports listen there
/// when `ports`); in the machines' order.
pub fn ask_each(machines: &[Machine], keys: &[String], limit: Duration, ports: bool) -> Vec<Asked> {
    std::thread::scope(|s| {
        let asked: Vec<_> = machines
            .iter()
            .map(|m| s.spawn(move || ask(m, keys, limit, ports)))
            .collect();
        asked
            .into_iter()
            .zip(machines)
            .map(|(a, m)| {
                let answer = a.join().unwrap_or_else(|_| {
                    Err(RemoteError::Local {
                        machine: m.name.clone(),
                        what: "asking it crashed".into(),
                    })
                });
                settle(m, keys, answer)
            })
            .collect()
    })
}

/// One machine's boxes of each repository of `keys`: `list` for one (with its
/// mirror's branches), `lists` for several (one round trip either way).
fn ask(m: &Machine, keys: &[String], limit: Duration, ports: bool) -> Result<Listed, RemoteError> {
    if let [key] = keys {
        let mut doc = boxes::list_there(m, key, limit, ports)?;
        let heads = Some(doc["heads"].take()).filter(Value::is_object);
        return Ok((vec![entries(&doc["boxes"])], heads));
    }
    let doc = boxes::lists_there(m, keys, limit, ports)?;
    let lists = keys
        .iter()
        .map(|k| entries(&doc["lists"][k]["boxes"]))
        .collect();
    Ok((lists, None))
}

/// A machine's answer: the boxes of each repository asked, and a mirror's branches.
type Listed = (Vec<Vec<Value>>, Option<Value>);

/// The box entries of a machine's answer: objects with a string `name`, at most
/// [`machine_lists::MAX_BOXES`]; a `stale` of its own taken out.
fn entries(listed: &Value) -> Vec<Value> {
    listed
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b.is_object() && b["name"].is_string())
        .take(machine_lists::MAX_BOXES)
        .cloned()
        .map(|mut b| {
            if let Some(o) = b.as_object_mut() {
                o.remove("stale");
            }
            b
        })
        .collect()
}

/// An answer kept, or in its stead what the machine last answered, marked stale; each
/// box given its machine.
fn settle(m: &Machine, keys: &[String], answer: Result<Listed, RemoteError>) -> Asked {
    let mark = |mut boxes: Vec<Value>, stale: bool| -> Vec<Value> {
        for b in &mut boxes {
            b["machine"] = Value::String(m.name.clone());
            if stale {
                b["stale"] = Value::Bool(true);
            }
        }
        boxes
    };
    match answer {
        Ok((lists, heads)) => {
            for (key, boxes) in keys.iter().zip(&lists) {
                // A cache: not kept is only not shown when the machine is down.
                let _ = machine_lists::keep(&m.name, &m.ssh, key, boxes);
            }
            Asked {
                machine: m.name.clone(),
                boxes: lists.into_iter().map(|b| mark(b, false)).collect(),
                failed: None,
                heads,
            }
        }
        Err(e) => {
            let known: Vec<Option<machine_lists::Known>> = keys
                .iter()
                .map(|k| machine_lists::last_known(&m.name, &m.ssh, k))
                .collect();
            // When it last answered: the oldest of the answers kept.
            let at = known.iter().flatten().map(|k| k.at).min();
            Asked {
                machine: m.name.clone(),
                boxes: known
                    .into_iter()
                    .map(|k| mark(k.map(|k| k.boxes).unwrap_or_default(), true))
                    .collect(),
                failed: Some((e, at)),
                heads: None,
            }
        }
    }
}

/// Treebox removed box `name` of repository `key` on `m`: it leaves what `m` last
/// listed.
pub fn forget(m: &Machine, key: &str, name: &str) {
    // A cache: a box not dropped from it shows, stale, only while `m` is down.
    let _ = machine_lists::forget(&m.name, &m.ssh, key, name);
}

/// A far box's `ports`, and `listening`, `loopbackOnly` and `unknown` as its machine's
/// `list --json` gave them, read leniently: port numbers (1–65535) alone, each once, at
/// most [`crate::ports::MAX_COUNT`] of each; the others only from its block, and only
/// when it says which listen (`None` without `listening`, or without a block:
/// `list`'s rules).
pub fn far_ports(b: &serde_json::Value) -> (Vec<u16>, Option<crate::runner::PortsNow>) {
    let read = |k: &str, within: Option<&[u16]>| -> Option<Vec<u16>> {
        let mut got: Vec<u16> = Vec::new();
        for p in b[k]
            .as_array()?
            .iter()
            .take(usize::from(crate::ports::MAX_COUNT))
        {
            let Some(p) = p.as_u64().and_then(|p| u16::try_from(p).ok()) else {
                continue;
            };
            if p != 0 && !got.contains(&p) && within.is_none_or(|w| w.contains(&p)) {
                got.push(p);
            }
        }
        Some(got)
    };
    let ports = read("ports", None).unwrap_or_default();
    if ports.is_empty() {
        return (ports, None);
    }
    let now = read("listening", Some(&ports)).map(|listening| crate::runner::PortsNow {
        listening,
        loopback_only: read("loopbackOnly", Some(&ports)).unwrap_or_default(),
        unknown: read("unknown", Some(&ports)).unwrap_or_default(),
    });
    (ports, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_machine_cannot_mark_its_own_boxes_stale_nor_send_nameless_ones() {
        let listed = json!([
            {"name": "a", "stale": true, "state": "ok"},
            {"name": 3},
            "b",
            {"name": "c"}
        ]);
        assert_eq!(
            entries(&listed),
            [json!({"name": "a", "state": "ok"}), json!({"name": "c"})]
        );
        assert_eq!(entries(&json!({"name": "a"})), Vec::<Value>::new());
    }

    #[test]
    fn a_far_box_s_ports_are_read_within_its_block() {
        let b = json!({"ports": [20000, 20001, 20002], "listening": [20000, 9], "loopbackOnly": [20001, 20001], "unknown": [20002, "x", 70000]});
        let (block, now) = far_ports(&b);
        assert_eq!(block, [20000, 20001, 20002]);
        let now = now.unwrap();
        assert_eq!(now.listening, [20000]);
        assert_eq!(now.loopback_only, [20001]);
        assert_eq!(now.unknown, [20002]);
        // Without `listening` nothing was read there; without a block, nothing counts.
        assert_eq!(
            far_ports(&json!({"ports": [20000], "unknown": [20000]})).1,
            None
        );
        assert_eq!(
            far_ports(&json!({"listening": [20000]})),
            (Vec::new(), None)
        );
    }
}
