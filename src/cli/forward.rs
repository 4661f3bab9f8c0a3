//! A far box's ports forwarded here, as `open` and `enter` do it (SPEC §7b).

use super::ui::Ui;

/// Forward the far box's block (as its machine listed it) to this machine's loopback on
/// the machine's shared connection, saying which ports and under which numbers; each
/// port forwarded, with its number here.
pub(crate) fn forward_far(far: &super::on::Far, ui: &mut Ui) -> Vec<(u16, u16)> {
    let (block, _) = crate::remote::listing::far_ports(&far.entry);
    let leaf = crate::sanitize::line(&far.leaf);
    let mut here = Vec::new();
    for (there, got) in crate::remote::forward::block(&far.machine, &block) {
        match got {
            Ok(local) => here.push((there, local)),
            Err(why) => ui.warning(&format!(
                "port {there} of box `{leaf}` is not forwarded here: {why}"
            )),
        }
    }
    if !here.is_empty() {
        let said: Vec<String> = here
            .iter()
            .map(|(there, local)| match there == local {
                true => there.to_string(),
                false => format!("{there} as {local}"),
            })
            .collect();
        ui.info(&format!(
            "box `{leaf}`'s ports on `{}` reach 127.0.0.1 here while its connection lasts: {}",
            far.machine.name,
            said.join(", ")
        ));
    }
    here
}
