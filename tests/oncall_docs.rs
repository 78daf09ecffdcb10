//! docs/operations.md shows the on-call commands' real output: its
//! `<!-- captured: NAME -->` blocks are well-formed, and equal (normalized)
//! to what the last e2e run captured, when this checkout has such a run.

mod doc_capture;

use doc_capture::{blocks, check, dir, doc, normalize};

/// The blocks tests/e2e/oncall.rs captures.
const CAPTURED: [&str; 3] = ["explain", "stuck", "records-show"];

#[test]
fn every_captured_block_is_well_formed_and_known() {
    let text = std::fs::read_to_string(doc()).expect("docs/operations.md");
    let names: Vec<String> = blocks(&text)
        .expect("well-formed blocks")
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(
        names, CAPTURED,
        "the doc's captured blocks and the e2e captures must match one to one"
    );
}

#[test]
fn captured_blocks_match_the_last_e2e_run() {
    if !dir().exists() {
        eprintln!(
            "no e2e capture in {} (run the e2e suite): nothing to compare",
            dir().display()
        );
        return;
    }
    for name in CAPTURED {
        if dir().join(format!("{name}.txt")).exists() {
            check(name).unwrap_or_else(|stale| panic!("{stale}"));
        }
    }
}

#[test]
fn normalizing_blanks_only_what_differs_between_runs() {
    let a = "fd-5bac4e8a-3f6d-4abc-9d7e-2c4f6b8a0d03   Pod e2e/web-0   n1   12s    Verifying\n  pod IPs:    10.244.0.7\n  at 2026-12-07T02:01:02Z";
    let b = "fd-0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6   Pod e2e/web-0   n1   3m4s   Verifying\n  pod IPs:    10.244.1.9\n  at 2026-12-08T11:00:00Z";
    assert_eq!(normalize(a), normalize(b));
    assert_ne!(normalize(a), normalize(&a.replace("Verifying", "Clean")));
    assert_ne!(normalize(a), normalize(&a.replace("web-0", "web-1")));
    assert_eq!(
        normalize("(checked 1 Deployment, 3 StatefulSets, 0 DaemonSets)"),
        normalize("(checked 2 Deployments, 1 StatefulSet, 0 DaemonSets)")
    );
}
