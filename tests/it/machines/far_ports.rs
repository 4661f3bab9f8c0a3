//! A far box's dev server reached from the laptop (issue 42, point 5): its block comes
//! with `list --json`, which of its ports listen with `list --ports`, and `open`
//! forwards the block on the machine's shared connection and prints a URL of this
//! machine that reaches the server there. Here the machine is this host under another
//! account, so its server's own port is taken here too: the forward takes a port the
//! kernel picks, and says so. `enter` forwards the block while it is attached; a
//! port free here keeps its number.

use std::time::Duration;

use serde_json::Value;

use super::listing::world;
use crate::env::{named, TestEnv};
use crate::ports::{ask, wait_for};

/// The far box's entry in `list --json` (with `--ports` when `ports`).
fn far_entry(env: &TestEnv, ports: bool) -> Value {
    let mut args = vec!["list", "--json"];
    if ports {
        args.push("--ports");
    }
    let doc = env.treebox(&args).ok().json();
    named(&doc, "boxes", "feat--web").clone()
}

fn numbers(v: &Value) -> Vec<u16> {
    v.as_array()
        .map(|a| a.iter().map(|p| p.as_u64().unwrap() as u16).collect())
        .unwrap_or_default()
}

#[test]
fn open_forwards_a_far_boxs_port_and_prints_a_url_that_reaches_its_server() {
    let Some((env, sshd, _)) = world(&["feat/web"]) else {
        return;
    };
    let entry = far_entry(&env, false);
    assert_eq!(entry["machine"], "big", "{entry}");
    let block = numbers(&entry["ports"]);
    assert_eq!(block.len(), 2, "{entry}");
    assert!(entry.get("listening").is_none(), "{entry}");
    let port = block[0];

    // Nothing listens yet: refused (3), with the way to start one.
    let none = env.treebox(&["open", "feat--web", "--print"]);
    assert_eq!(none.code, 3, "{none:?}");
    assert!(
        none.stderr.contains("nothing in box `feat--web` listens"),
        "{none:?}"
    );
    assert!(none.stdout.is_empty(), "{none:?}");

    // Its server, started there through `run`, bound as the box's variables say.
    env.sandbox(&[
        "run",
        "feat--web",
        "--",
        "sh",
        "-c",
        "echo far >served-from-big.txt; setsid python3 -m http.server \"$TREEBOX_PORT\" \
         --bind \"$TREEBOX_HOST\" >/dev/null 2>&1 </dev/null &",
    ])
    .ok();
    wait_for("the far server to listen", 20, || {
        numbers(&far_entry(&env, true)["listening"]) == [port]
    });
    // The table's PORTS column says so for the far box as for one here.
    let table = env.treebox(&["list", "--ports"]);
    let row = table.stdout.lines().find(|l| l.contains("feat--web"));
    assert!(
        row.is_some_and(|r| r.contains(&format!(" {port} "))),
        "{table:?}"
    );

    let opened = env.treebox(&["open", "feat--web", "--print"]);
    assert_eq!(opened.code, 0, "{opened:?}");
    eprintln!("open: {}{}", opened.stdout, opened.stderr);
    let url = opened.stdout.trim().to_string();
    let here: u16 = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|r| r.strip_suffix('/'))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("not a loopback URL: {opened:?}"));
    // The server holds its port on this host: the forward took another, and says so.
    assert_ne!(here, port, "{opened:?}");
    assert!(
        opened.stderr.contains(&format!("{port} as {here}")),
        "{opened:?}"
    );
    let answer = ask(&format!("127.0.0.1:{here}")).unwrap_or_default();
    assert!(
        answer.starts_with("HTTP/1.0 200") && answer.contains("served-from-big.txt"),
        "{answer}\n{}",
        sshd.log()
    );
    // Asked again, the same forward is kept: the same URL.
    let again = env.treebox(&["open", "feat--web", "--print"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.stdout, opened.stdout, "{again:?}");
    // A port not of the box is refused (2), nothing forwarded for it.
    let foreign = env.treebox(&["open", "feat--web", "1234", "--print"]);
    assert_eq!(foreign.code, 2, "{foreign:?}");

    // `enter -d` forwards the block too: the second port, free here, keeps its
    // number (the shared connection listens on it).
    let second = block[1];
    let entered = env.treebox(&["enter", "-d", "feat--web"]);
    assert!(
        entered.stderr.contains(&format!("{second}"))
            && entered.stderr.contains("reach 127.0.0.1 here"),
        "{entered:?}"
    );
    assert!(
        std::net::TcpStream::connect_timeout(
            &format!("127.0.0.1:{second}").parse().unwrap(),
            Duration::from_secs(2)
        )
        .is_ok(),
        "nothing listens here on {second}"
    );
}
