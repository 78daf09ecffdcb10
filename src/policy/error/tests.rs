use super::*;

#[test]
fn displays_file_line_column() {
    let finding = Finding {
        file: "p/node-alive.yaml".into(),
        line: 7,
        column: 13,
        message: "unknown fact `node.redy`".into(),
    };
    assert_eq!(
        finding.to_string(),
        "p/node-alive.yaml:7:13: unknown fact `node.redy`"
    );
    let err = PolicyError::Invalid(vec![finding.clone(), finding]);
    assert!(err.to_string().ends_with("(and 1 more problems)"));
}
