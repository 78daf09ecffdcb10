use super::*;

#[test]
fn tokens_keep_the_distinctive_labels() {
    assert_eq!(tokens("acme.example"), ["acme", "example"]);
    assert_eq!(tokens("cert-manager.io"), ["cert-manager"]);
    assert_eq!(tokens("finalizers.fluxcd.io"), ["fluxcd"]);
    assert_eq!(tokens("ebs.csi.aws.com"), ["ebs", "aws"]);
    assert!(tokens("k8s.io").is_empty());
    let csi = check("external-attacher/ebs-csi-aws-com", &Evidence::default());
    assert_eq!(
        csi.owner,
        "csi-external-attacher matching \"ebs\" or \"aws\""
    );
}

#[test]
fn words_match_whole() {
    assert!(has_word("acme-operator acme-system", "acme"));
    assert!(has_word("ghcr.io/acme/operator:v1", "acme"));
    assert!(!has_word("acmesoft-operator", "acme"));
    assert!(has_word("cert-manager-webhook", "cert-manager"));
}
