use super::*;

#[test]
fn estimates_count_items_outside_strings() {
    assert_eq!(estimate(b"{}"), 2 + BYTES_PER_ITEM);
    assert_eq!(estimate(br#"{"a":[0,0]}"#), 11 + 4 * BYTES_PER_ITEM);
    // Separators inside strings, escaped quotes included, are text.
    let text = br#"{"k":"a,b:[{\"x\",}]"}"#;
    assert_eq!(estimate(text), text.len() + 2 * BYTES_PER_ITEM);
    // An unterminated string ends the count rather than panicking.
    assert_eq!(estimate(br#"["abc"#), 5 + BYTES_PER_ITEM);
    let zeros: Vec<u8> = std::iter::once(b'[')
        .chain(std::iter::repeat_n(b"0,".iter().copied(), 1000).flatten())
        .chain(*b"0]")
        .collect();
    assert!(estimate(&zeros) <= worst_case(zeros.len()));
}

#[tokio::test]
async fn small_bodies_reserve_their_worst_case_and_large_ones_settle() {
    let budget = BodyBudget::new(8 * 1024 * 1024);
    let small = budget.reserve(Some(4 * 1024)).await;
    let small_kib = small
        .permit
        .as_ref()
        .map_or(0, SemaphorePermit::num_permits);
    assert_eq!(small_kib, kib(worst_case(4 * 1024)));
    drop(small);

    // A large body holds the whole budget until it is counted.
    let text = format!("{{\"a\":\"{}\"}}", "x".repeat(100 * 1024));
    let mut large = budget.reserve(Some(text.len())).await;
    assert_eq!(budget.kib.available_permits(), 0);
    budget.settle(&mut large, text.as_bytes()).expect("fits");
    assert_eq!(
        budget.kib.available_permits(),
        budget.total_kib - kib(estimate(text.as_bytes()))
    );
    drop(large);
    assert_eq!(budget.kib.available_permits(), budget.total_kib);

    // One that would decode past the whole budget is refused.
    let zeros = format!("[{}0]", "0,".repeat(100 * 1024));
    let mut refused = budget.reserve(None).await;
    let err = budget
        .settle(&mut refused, zeros.as_bytes())
        .expect_err("too complex");
    assert_eq!(err.budget, 8 * 1024 * 1024);
    assert!(err.estimate > err.budget);
}
