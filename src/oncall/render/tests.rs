use super::*;

#[test]
fn ages_read_like_kubectl() {
    for (seconds, text) in [
        (-5, "0s"),
        (45, "45s"),
        (119, "119s"),
        (303, "5m3s"),
        (600, "10m"),
        (3 * 3600 + 240, "3h4m"),
        (30 * 3600, "30h"),
        (2 * 86_400 + 4 * 3600, "2d4h"),
        (200 * 86_400, "200d"),
    ] {
        assert_eq!(age(seconds), text, "{seconds}");
    }
}

#[test]
fn tables_pad_all_but_the_last_column() {
    let text = table(
        &["NAME", "AGE"],
        &[
            vec!["a".into(), "1s".into()],
            vec!["longer".into(), "2m".into()],
        ],
    );
    assert_eq!(text, "NAME     AGE\na        1s\nlonger   2m\n");
}

#[test]
fn colour_only_when_asked() {
    assert_eq!(Style { color: false }.red("x"), "x");
    assert_eq!(Style { color: true }.red("x"), "\x1b[1;31mx\x1b[0m");
}
