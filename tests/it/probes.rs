//! Issue 38, "also found" (c): treebox's own look inside an image it built (the agent
//! CLIs' versions, asked once per image for `doctor`) has a deadline. An image whose
//! `claude` hangs used to leave a throwaway container running forever, and `create`
//! waiting on it; now the look is given up after its limit and its container removed.

use std::time::{Duration, Instant};

use crate::container::Boxed;

#[test]
fn an_image_whose_claude_hangs_delays_create_by_the_probe_limit_and_leaves_nothing_running() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let dockerfile = b.env.config_dir().join("treebox/templates/test/Dockerfile");
    let mut text = std::fs::read_to_string(&dockerfile).unwrap();
    text.push_str(
        "\nUSER root\nRUN printf '#!/bin/sh\\nexec sleep 600\\n' > /usr/local/bin/claude \
         && chmod 755 /usr/local/bin/claude\nUSER ${AGENT_UID}:${AGENT_GID}\n",
    );
    std::fs::write(&dockerfile, text).unwrap();

    let start = Instant::now();
    b.env.treebox(&["create", "hangs", "--no-launch"]).ok();
    let took = start.elapsed();
    // The build (a cached base, one RUN), then at most the probe's 20 s.
    assert!(took < Duration::from_secs(90), "create took {took:?}");

    let image = b.record("hangs")["container"]["image"]
        .as_str()
        .expect("the box's image")
        .to_string();
    let box_container = b.container("hangs");
    let out = b.engine(&[
        "ps",
        "-a",
        "--filter",
        &format!("ancestor={image}"),
        "--format",
        "{{.Names}}",
    ]);
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|n| *n != box_container)
        .map(String::from)
        .collect();
    assert!(
        names.is_empty(),
        "containers of the box's image besides the box's own: {names:?}"
    );
    // Nothing was learnt of the image: doctor says it does not know, and is bounded.
    let doctor = b.env.treebox(&["doctor", "--json"]);
    assert!(doctor.code == 0 || doctor.code == 1, "{doctor:?}");
}

#[test]
fn a_template_whose_build_fails_leaves_no_container_behind() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let dockerfile = b.env.config_dir().join("treebox/templates/test/Dockerfile");
    let mut text = std::fs::read_to_string(&dockerfile).unwrap();
    // After the test's own label, so the failed step's container carries it.
    text.push_str("\nRUN echo the step that fails; exit 3\n");
    std::fs::write(&dockerfile, text).unwrap();
    let r = b.env.treebox(&["create", "fails", "--no-launch"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("building the box image failed"), "{r:?}");
    let out = b.engine(&[
        "ps",
        "-a",
        "--filter",
        &format!("label=org.treebox.test-id={}", b.id),
        "--format",
        "{{.Names}}",
    ]);
    let left: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    // Removed before the verdict, so a regression leaves nothing behind either.
    for name in &left {
        let _ = b.engine(&["rm", "-f", name]);
    }
    assert!(left.is_empty(), "the failed build left: {left:?}");
}
