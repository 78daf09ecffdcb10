use super::*;

#[test]
fn durations_read_like_kubectl() {
    assert_eq!(duration("5m"), Ok(Duration::from_secs(300)));
    assert_eq!(duration("90"), Ok(Duration::from_secs(90)));
    assert_eq!(duration("1d"), Ok(Duration::from_secs(86_400)));
    assert!(duration("5x").is_err());
    assert!(duration("m").is_err());
}
